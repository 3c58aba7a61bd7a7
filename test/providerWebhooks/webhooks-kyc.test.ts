/**
 * Live KYC is decided by the provider: its `customer` / `kyc_link` webhooks move our customer to approved or
 * rejected (and payout creation follows); undecided states never undo a decision; unknown customers and
 * unknown statuses are acknowledged and change nothing.
 */
import { SqlClient } from "effect/sql"
import { Effect } from "effect"
import { describe, expect } from "vitest"
import { httpTest } from "../support/fixture.ts"
import type { TestServer } from "../support/server.ts"
import { BREB, call, expectErrorBody } from "../support/http.ts"
import { newAddress, type Partner, payoutBody } from "../support/flows.ts"
import {
  deliverProviderWebhook,
  newProviderKeyPair,
  providerEnvelope,
  signProviderWebhook
} from "../support/providerWebhooks.ts"

const keys = newProviderKeyPair()
const it = httpTest({ env: { PROVIDER_WEBHOOK_PUBLIC_KEY: keys.publicKey } })

/** A customer whose KYC was handed to the provider (what live OTP verify leaves behind). */
const pendingCustomer = async (server: TestServer, partner: Partner) => {
  const userAddress = newAddress()
  const providerCustomerId = `cust_${crypto.randomUUID()}`
  await server.direct(
    Effect.flatMap(
      SqlClient.SqlClient,
      (sql) =>
        sql`INSERT INTO customers (integration_id, user_address, email, kyc_status, kyc_url, provider_customer_id, created_at, updated_at)
        VALUES (${partner.integrationId}, ${userAddress.toLowerCase()}, 'ana@example.com', 'pending', 'https://kyc.example/ana',
                ${providerCustomerId}, now(), now())`
    )
  )
  return { userAddress, providerCustomerId }
}

const kycStatusOf = async (server: TestServer, userAddress: string) => {
  const rows = await server.direct(
    Effect.flatMap(
      SqlClient.SqlClient,
      (sql) =>
        sql<{ kyc_status: string }>`SELECT kyc_status FROM customers WHERE user_address = ${userAddress.toLowerCase()}`
    )
  )
  return rows[0]?.kyc_status
}

const send = async (server: TestServer, category: "customer" | "kyc_link", object: Record<string, unknown>) => {
  const body = providerEnvelope({ category, type: `${category}.updated`, object })
  const answer = await deliverProviderWebhook(server, body, signProviderWebhook(body, keys.privateKey))
  expect(answer.status, answer.text).toBe(200)
}

const createPayout = (server: TestServer, partner: Partner, userAddress: string) =>
  call(server, `${BREB}/payouts`, { apiKey: partner.apiKey, body: payoutBody(userAddress) })

describe("provider KYC webhooks", () => {
  it("a customer event with kyc_status approved approves the customer, and payouts can be created", async ({ server, partner }) => {
    const { userAddress, providerCustomerId } = await pendingCustomer(server, partner)
    expectErrorBody(await createPayout(server, partner, userAddress), 409, "needs_kyc")
    await send(server, "customer", { id: providerCustomerId, kyc_status: "approved", tos_status: "approved" })
    expect(await kycStatusOf(server, userAddress)).toBe("approved")
    expect((await createPayout(server, partner, userAddress)).status).toBe(201)
  })

  it("a kyc_link event with kyc_status rejected rejects; a late under_review does not undo it", async ({ server, partner }) => {
    const { userAddress, providerCustomerId } = await pendingCustomer(server, partner)
    await send(server, "kyc_link", { id: "kyc_link_1", customer_id: providerCustomerId, kyc_status: "rejected" })
    expect(await kycStatusOf(server, userAddress)).toBe("rejected")
    await send(server, "kyc_link", { id: "kyc_link_1", customer_id: providerCustomerId, kyc_status: "under_review" })
    expect(await kycStatusOf(server, userAddress)).toBe("rejected")
    expectErrorBody(await createPayout(server, partner, userAddress), 409, "needs_kyc")
  })

  it("an approved customer stays approved when an older incomplete state arrives late", async ({ server, partner }) => {
    const { userAddress, providerCustomerId } = await pendingCustomer(server, partner)
    await send(server, "customer", { id: providerCustomerId, kyc_status: "approved" })
    await send(server, "customer", { id: providerCustomerId, kyc_status: "incomplete" })
    expect(await kycStatusOf(server, userAddress)).toBe("approved")
  })

  it("an unknown provider customer or an unknown status is acknowledged and changes nothing", async ({ server, partner }) => {
    const { userAddress, providerCustomerId } = await pendingCustomer(server, partner)
    await send(server, "customer", { id: "cust_nobody", kyc_status: "approved" })
    await send(server, "customer", { id: providerCustomerId, kyc_status: "paused_by_compliance" })
    expect(await kycStatusOf(server, userAddress)).toBe("pending")
  })
})
