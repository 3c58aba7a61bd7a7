/**
 * Live KYC is decided by the provider: its `customer` / `kyc_link` webhooks move our customer to approved or
 * rejected (and payout creation follows); undecided states never undo a decision; unknown customers and
 * unknown statuses are acknowledged and change nothing.
 */
import { SqlClient } from "effect/sql"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { BREB, call, expectErrorBody } from "../support/http.ts"
import { newAddress, payoutBody } from "../support/flows.ts"
import {
  deliverProviderWebhook,
  newProviderKeyPair,
  providerEnvelope,
  signProviderWebhook
} from "../support/providerWebhooks.ts"
import { startTestServer, type TestServer } from "../support/server.ts"

const keys = newProviderKeyPair()
let server: TestServer
let apiKey: string
let integrationId: string

beforeAll(async () => {
  server = await startTestServer({ env: { PROVIDER_WEBHOOK_PUBLIC_KEY: keys.publicKey } })
  ;({ apiKey, integrationId } = await server.newIntegration())
})
afterAll(() => server?.close())

/** A customer whose KYC was handed to the provider (what live OTP verify leaves behind). */
const pendingCustomer = async () => {
  const userAddress = newAddress()
  const providerCustomerId = `cust_${crypto.randomUUID()}`
  await server.direct(
    Effect.flatMap(
      SqlClient.SqlClient,
      (sql) =>
        sql`INSERT INTO customers (integration_id, user_address, email, kyc_status, kyc_url, provider_customer_id, created_at, updated_at)
        VALUES (${integrationId}, ${userAddress.toLowerCase()}, 'ana@example.com', 'pending', 'https://kyc.example/ana',
                ${providerCustomerId}, now(), now())`
    )
  )
  return { userAddress, providerCustomerId }
}

const kycStatusOf = async (userAddress: string) => {
  const rows = await server.direct(
    Effect.flatMap(
      SqlClient.SqlClient,
      (sql) =>
        sql<{ kyc_status: string }>`SELECT kyc_status FROM customers WHERE user_address = ${userAddress.toLowerCase()}`
    )
  )
  return rows[0]?.kyc_status
}

const send = async (category: "customer" | "kyc_link", object: Record<string, unknown>) => {
  const body = providerEnvelope({ category, type: `${category}.updated`, object })
  const answer = await deliverProviderWebhook(server, body, signProviderWebhook(body, keys.privateKey))
  expect(answer.status, answer.text).toBe(200)
}

const createPayout = (userAddress: string) => call(server, `${BREB}/payouts`, { apiKey, body: payoutBody(userAddress) })

describe("provider KYC webhooks", () => {
  it("a customer event with kyc_status approved approves the customer, and payouts can be created", async () => {
    const { userAddress, providerCustomerId } = await pendingCustomer()
    expectErrorBody(await createPayout(userAddress), 409, "needs_kyc")
    await send("customer", { id: providerCustomerId, kyc_status: "approved", tos_status: "approved" })
    expect(await kycStatusOf(userAddress)).toBe("approved")
    expect((await createPayout(userAddress)).status).toBe(201)
  })

  it("a kyc_link event with kyc_status rejected rejects; a late under_review does not undo it", async () => {
    const { userAddress, providerCustomerId } = await pendingCustomer()
    await send("kyc_link", { id: "kyc_link_1", customer_id: providerCustomerId, kyc_status: "rejected" })
    expect(await kycStatusOf(userAddress)).toBe("rejected")
    await send("kyc_link", { id: "kyc_link_1", customer_id: providerCustomerId, kyc_status: "under_review" })
    expect(await kycStatusOf(userAddress)).toBe("rejected")
    expectErrorBody(await createPayout(userAddress), 409, "needs_kyc")
  })

  it("an approved customer stays approved when an older incomplete state arrives late", async () => {
    const { userAddress, providerCustomerId } = await pendingCustomer()
    await send("customer", { id: providerCustomerId, kyc_status: "approved" })
    await send("customer", { id: providerCustomerId, kyc_status: "incomplete" })
    expect(await kycStatusOf(userAddress)).toBe("approved")
  })

  it("an unknown provider customer or an unknown status is acknowledged and changes nothing", async () => {
    const { userAddress, providerCustomerId } = await pendingCustomer()
    await send("customer", { id: "cust_nobody", kyc_status: "approved" })
    await send("customer", { id: providerCustomerId, kyc_status: "paused_by_compliance" })
    expect(await kycStatusOf(userAddress)).toBe("pending")
  })
})
