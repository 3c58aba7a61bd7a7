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
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { serverLayerFor } from "../../src/App.ts"
import { MockScenarioLive } from "../../src/base/MockScenario.ts"
import { ChainMock } from "../../src/chain/ChainMock.ts"
import { DemoBootstrapMock } from "../../src/integrations/DemoMock.ts"
import { ProviderKycReads } from "../../src/kyc/CustomerKyc.ts"
import { OtpCodesMock } from "../../src/kyc/OtpCodesMock.ts"
import { MailerDisabled } from "../../src/mailer/Mailer.ts"
import { MarketMock } from "../../src/market/MarketMock.ts"
import { Outbox } from "../../src/outbox/Outbox.ts"
import { WebhookTargetsOpen } from "../../src/partnerEvents/WebhookTargets.ts"
import { PayoutProvider, ProviderUnavailable } from "../../src/provider/PayoutProvider.ts"
import { BridgeCallbacks } from "../../src/provider/bridge/BridgeCallbacks.ts"
import { ProviderMock } from "../../src/provider/mock/ProviderMock.ts"
import { RateCacheMock } from "../../src/quotes/RateCacheMock.ts"
import { RequoteGuardMock } from "../../src/quotes/RequoteGuardMock.ts"
import { SwapRouterMock } from "../../src/router/SwapRouterMock.ts"
import { TestHelpersNone } from "../../src/testHelpers/TestHelpers.ts"
import { BREB, call, expectErrorBody, newAddress } from "../support/http.ts"
import {
  deliverProviderWebhook,
  newProviderKeyPair,
  providerEnvelope,
  signProviderWebhook
} from "../support/providerWebhooks.ts"
import { startTestServer, type TestServer } from "../support/server.ts"

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
let server: TestServer
let apiKey: string
let integrationId: string

beforeAll(async () => {
  server = await startTestServer({
    env: { PROVIDER_WEBHOOK_PUBLIC_KEY: keys.publicKey },
    // remembered for the whole file (reads of a customer ask once), and a short wait for a provider that is slow
    overrides: Layer.succeed(ProviderKycReads, { rememberFor: Duration.hours(1), waitAtMost: Duration.millis(300) }),
    app: (config) =>
      serverLayerFor(config, {
        ports: Layer.mergeAll(
          ScriptedProvider,
          BridgeCallbacks,
          ChainMock,
          SwapRouterMock,
          MarketMock,
          OtpCodesMock,
          RequoteGuardMock,
          DemoBootstrapMock,
          MailerDisabled,
          WebhookTargetsOpen
        ),
        outbox: Outbox.Default,
        rateCache: RateCacheMock,
        testHelpers: TestHelpersNone,
        apiMiddleware: MockScenarioLive
      })
  })
  ;({ apiKey, integrationId } = await server.newIntegration())
})
afterAll(() => server?.close())

const sql = <A extends object>(f: (sql: SqlClient.SqlClient) => Effect.Effect<ReadonlyArray<A>, unknown>) =>
  server.direct(Effect.flatMap(SqlClient.SqlClient, f))

/** A customer as live mode's verify leaves it: handed to the provider, pending, its OTP code used. */
const pendingCustomer = async () => {
  const userAddress = newAddress()
  const providerCustomerId = `cust_${crypto.randomUUID()}`
  await sql((q) =>
    q`INSERT INTO customers (integration_id, user_address, email, kyc_status, kyc_url, provider_customer_id, created_at, updated_at)
      VALUES (${integrationId}, ${userAddress.toLowerCase()}, 'camila@example.com', 'pending', 'https://kyc.example/camila',
              ${providerCustomerId}, now(), now())
      RETURNING user_address`
  )
  return { userAddress, providerCustomerId }
}

const read = (userAddress: string) => call(server, `${BREB}/kyc/customers/${userAddress}`, { apiKey })

const statusRead = async (userAddress: string) => {
  const answer = await read(userAddress)
  expect(answer.status, answer.text).toBe(200)
  return answer.body.kycStatus as string
}

const verify = (userAddress: string, code = "123456") =>
  call(server, `${BREB}/kyc/otp/verify`, { apiKey, body: { userAddress, code } })

const askedAbout = (providerCustomerId: string) => asked.filter((id) => id === providerCustomerId).length

const eventsOf = (userAddress: string) =>
  sql<{ type: string }>((q) =>
    q`SELECT type FROM events WHERE integration_id = ${integrationId} AND resource_id = ${userAddress.toLowerCase()}
      ORDER BY sequence`
  ).then((rows) => rows.map((row) => row.type))

describe("a customer the provider has not decided through a webhook", () => {
  it("reads approved once the provider approved it, recorded with one kyc.approved, which its webhook does not repeat", async () => {
    const { providerCustomerId, userAddress } = await pendingCustomer()
    scripts.set(providerCustomerId, "approved")

    const answer = await read(userAddress)
    expect(answer.status, answer.text).toBe(200)
    expect(answer.body).toMatchObject({ userAddress, kycStatus: "approved", email: "c***@example.com" })
    expect(await eventsOf(userAddress)).toEqual(["kyc.approved"])

    const webhook = providerEnvelope({
      category: "customer",
      type: "customer.updated",
      object: { id: providerCustomerId, kyc_status: "approved" }
    })
    expect((await deliverProviderWebhook(server, webhook, signProviderWebhook(webhook, keys.privateKey))).status)
      .toBe(200)
    expect(await statusRead(userAddress)).toBe("approved")
    expect(await eventsOf(userAddress)).toEqual(["kyc.approved"])
    // decided: later reads answer the stored decision without asking
    expect(askedAbout(providerCustomerId)).toBe(1)
  })

  it("reads rejected once the provider rejected it", async () => {
    const { providerCustomerId, userAddress } = await pendingCustomer()
    scripts.set(providerCustomerId, "rejected")
    expect(await statusRead(userAddress)).toBe("rejected")
    expect(await eventsOf(userAddress)).toEqual(["kyc.rejected"])
  })

  it("asks the provider once for a storm of reads while its answer is remembered", async () => {
    const { providerCustomerId, userAddress } = await pendingCustomer()
    const statuses = await Promise.all(Array.from({ length: 20 }, () => statusRead(userAddress)))
    expect(statuses).toEqual(Array.from({ length: 20 }, () => "pending"))
    expect(askedAbout(providerCustomerId)).toBe(1)
    expect(await eventsOf(userAddress)).toEqual([])
  })

  it("answers the stored status while the provider is down", async () => {
    const { providerCustomerId, userAddress } = await pendingCustomer()
    scripts.set(providerCustomerId, "down")
    expect(await statusRead(userAddress)).toBe("pending")
    expect(askedAbout(providerCustomerId)).toBe(1)
    // nothing to check and not approved: the repeated verify is still otp_invalid
    expectErrorBody(await verify(userAddress), 400, "otp_invalid")
  })

  it("answers the stored status while the provider is slow, and records its decision when it comes", async () => {
    const { providerCustomerId, userAddress } = await pendingCustomer()
    const gate = Effect.runSync(Deferred.make<void>())
    held.set(providerCustomerId, gate)
    scripts.set(providerCustomerId, "approved")
    expect(await statusRead(userAddress)).toBe("pending")
    await Effect.runPromise(Deferred.succeed(gate, undefined))
    await vi.waitFor(async () => expect(await statusRead(userAddress)).toBe("approved"), { interval: 20 })
    expect(askedAbout(providerCustomerId)).toBe(1)
    expect(await eventsOf(userAddress)).toEqual(["kyc.approved"])
  })

  it("answers a repeated verify with the customer once the provider approved it", async () => {
    const { providerCustomerId, userAddress } = await pendingCustomer()
    scripts.set(providerCustomerId, "approved")
    const verified = await verify(userAddress)
    expect(verified.status, verified.text).toBe(200)
    expect(verified.body).toEqual({ userAddress, kycStatus: "approved", kycUrl: "https://kyc.example/camila" })
    expect(await eventsOf(userAddress)).toEqual(["kyc.approved"])
  })
})
