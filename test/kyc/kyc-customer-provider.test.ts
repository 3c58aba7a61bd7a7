/**
 * Issue #29 part 5: a customer whose KYC the provider has not decided through a webhook yet is read from the provider.
 * The app runs over a provider whose `getCustomerKyc` answers what each test scripts (pending, approved, rejected,
 * down, or held until the test lets it answer) and counts the calls; customers are written as live mode's verify
 * leaves them (pending, with a provider customer). What the provider decides is recorded once, as its webhook would;
 * reads of one customer ask the provider once while its answer is remembered; a provider that is down or slow leaves
 * the stored status as the answer.
 */
import { SqlClient } from "effect/sql"
import type { KycStatus } from "@cop-integrations/contracts"
import { Deferred, Duration, Effect, Layer } from "effect"
import { describe, expect, vi } from "vitest"
import { httpTest } from "../support/fixture.ts"
import { mockModeWith } from "../support/mockModeWith.ts"
import { Outbox } from "../../src/outbox/Outbox.ts"
import type { TestServer } from "../support/server.ts"
import type { Partner } from "../support/flows.ts"
import { ProviderKycReads } from "../../src/kyc/CustomerKyc.ts"
import { PayoutProvider, ProviderUnavailable } from "../../src/provider/PayoutProvider.ts"
import { ProviderMock } from "../../src/provider/mock/ProviderMock.ts"
import { BREB, call, expectErrorBody, newAddress } from "../support/http.ts"
import {
  deliverProviderWebhook,
  newProviderKeyPair,
  providerEnvelope,
  signProviderWebhook
} from "../support/providerWebhooks.ts"

type Script = KycStatus | "down"

/** What the provider says about each customer (pending unless scripted). */
const scripts = new Map<string, Script>()
/** Customers whose next answer waits until the test releases it. */
const held = new Map<string, Deferred.Deferred<void>>()
/** Every customer the service asked about, in order. */
const asked: Array<string> = []

const ScriptedProvider = Layer.effect(
  PayoutProvider,
  Effect.map(PayoutProvider, (mock) =>
    PayoutProvider.of({
      ...mock,
      getCustomerKyc: (providerCustomerId) =>
        Effect.gen(function*() {
          asked.push(providerCustomerId)
          const gate = held.get(providerCustomerId)
          if (gate !== undefined) yield* Deferred.await(gate)
          const script = scripts.get(providerCustomerId) ?? "pending"
          return script === "down"
            ? yield* Effect.fail(new ProviderUnavailable({ reason: "scripted outage" }))
            : script
        })
    }))
).pipe(Layer.provide(ProviderMock))

const keys = newProviderKeyPair()
const it = httpTest({
  env: { PROVIDER_WEBHOOK_PUBLIC_KEY: keys.publicKey },
  // remembered for the whole file (reads of a customer ask once), and a short wait for a provider that is slow
  overrides: Layer.succeed(ProviderKycReads, { rememberFor: Duration.hours(1), waitAtMost: Duration.millis(300) }),
  // the scripted provider's transfers move only as the test says
  app: mockModeWith({ provider: ScriptedProvider, outbox: Outbox.Default })
})

const sql = <A extends object>(
  server: TestServer,
  f: (sql: SqlClient.SqlClient) => Effect.Effect<ReadonlyArray<A>, unknown>
) => server.direct(Effect.flatMap(SqlClient.SqlClient, f))

/** A customer as live mode's verify leaves it: handed to the provider, pending, its OTP code used. */
const pendingCustomer = async (server: TestServer, partner: Partner) => {
  const userAddress = newAddress()
  const providerCustomerId = `cust_${crypto.randomUUID()}`
  await sql(
    server,
    (q) =>
      q`INSERT INTO customers (integration_id, user_address, email, kyc_status, kyc_url, provider_customer_id, created_at, updated_at)
      VALUES (${partner.integrationId}, ${userAddress.toLowerCase()}, 'camila@example.com', 'pending', 'https://kyc.example/camila',
              ${providerCustomerId}, now(), now())
      RETURNING user_address`
  )
  return { userAddress, providerCustomerId }
}

const read = (server: TestServer, partner: Partner, userAddress: string) =>
  call(server, `${BREB}/kyc/customers/${userAddress}`, { apiKey: partner.apiKey })

const statusRead = async (server: TestServer, partner: Partner, userAddress: string) => {
  const answer = await read(server, partner, userAddress)
  expect(answer.status, answer.text).toBe(200)
  return answer.body.kycStatus as string
}

const verify = (server: TestServer, partner: Partner, userAddress: string, code = "123456") =>
  call(server, `${BREB}/kyc/otp/verify`, { apiKey: partner.apiKey, body: { userAddress, code } })

const askedAbout = (providerCustomerId: string) => asked.filter((id) => id === providerCustomerId).length

const eventsOf = (server: TestServer, partner: Partner, userAddress: string) =>
  sql<{ type: string }>(
    server,
    (q) =>
      q`SELECT type FROM events WHERE integration_id = ${partner.integrationId} AND resource_id = ${userAddress.toLowerCase()}
      ORDER BY sequence`
  ).then((rows) => rows.map((row) => row.type))

describe("a customer the provider has not decided through a webhook", () => {
  it("reads approved once the provider approved it, recorded with one kyc.approved, which its webhook does not repeat", async ({ server, partner }) => {
    const { providerCustomerId, userAddress } = await pendingCustomer(server, partner)
    scripts.set(providerCustomerId, "approved")

    const answer = await read(server, partner, userAddress)
    expect(answer.status, answer.text).toBe(200)
    expect(answer.body).toMatchObject({ userAddress, kycStatus: "approved", email: "c***@example.com" })
    expect(await eventsOf(server, partner, userAddress)).toEqual(["kyc.approved"])

    const webhook = providerEnvelope({
      category: "customer",
      type: "customer.updated",
      object: { id: providerCustomerId, kyc_status: "approved" }
    })
    expect((await deliverProviderWebhook(server, webhook, signProviderWebhook(webhook, keys.privateKey))).status)
      .toBe(200)
    expect(await statusRead(server, partner, userAddress)).toBe("approved")
    expect(await eventsOf(server, partner, userAddress)).toEqual(["kyc.approved"])
    // decided: later reads answer the stored decision without asking
    expect(askedAbout(providerCustomerId)).toBe(1)
  })

  it("reads rejected once the provider rejected it", async ({ server, partner }) => {
    const { providerCustomerId, userAddress } = await pendingCustomer(server, partner)
    scripts.set(providerCustomerId, "rejected")
    expect(await statusRead(server, partner, userAddress)).toBe("rejected")
    expect(await eventsOf(server, partner, userAddress)).toEqual(["kyc.rejected"])
  })

  it("asks the provider once for a storm of reads while its answer is remembered", async ({ server, partner }) => {
    const { providerCustomerId, userAddress } = await pendingCustomer(server, partner)
    const statuses = await Promise.all(Array.from({ length: 20 }, () => statusRead(server, partner, userAddress)))
    expect(statuses).toEqual(Array.from({ length: 20 }, () => "pending"))
    expect(askedAbout(providerCustomerId)).toBe(1)
    expect(await eventsOf(server, partner, userAddress)).toEqual([])
  })

  it("answers the stored status while the provider is down", async ({ server, partner }) => {
    const { providerCustomerId, userAddress } = await pendingCustomer(server, partner)
    scripts.set(providerCustomerId, "down")
    expect(await statusRead(server, partner, userAddress)).toBe("pending")
    expect(askedAbout(providerCustomerId)).toBe(1)
    // nothing to check and not approved: the repeated verify is still otp_invalid
    expectErrorBody(await verify(server, partner, userAddress), 400, "otp_invalid")
  })

  it("answers the stored status while the provider is slow, and records its decision when it comes", async ({ server, partner }) => {
    const { providerCustomerId, userAddress } = await pendingCustomer(server, partner)
    const gate = Effect.runSync(Deferred.make<void>())
    held.set(providerCustomerId, gate)
    scripts.set(providerCustomerId, "approved")
    expect(await statusRead(server, partner, userAddress)).toBe("pending")
    await Effect.runPromise(Deferred.succeed(gate, undefined))
    await vi.waitFor(async () => expect(await statusRead(server, partner, userAddress)).toBe("approved"), {
      interval: 20
    })
    expect(askedAbout(providerCustomerId)).toBe(1)
    expect(await eventsOf(server, partner, userAddress)).toEqual(["kyc.approved"])
  })

  it("answers a repeated verify with the customer once the provider approved it", async ({ server, partner }) => {
    const { providerCustomerId, userAddress } = await pendingCustomer(server, partner)
    scripts.set(providerCustomerId, "approved")
    const verified = await verify(server, partner, userAddress)
    expect(verified.status, verified.text).toBe(200)
    expect(verified.body).toEqual({ userAddress, kycStatus: "approved", kycUrl: "https://kyc.example/camila" })
    expect(await eventsOf(server, partner, userAddress)).toEqual(["kyc.approved"])
  })
})
