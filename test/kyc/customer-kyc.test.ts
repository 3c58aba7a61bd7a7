/**
 * The KYC gate every payout passes, `CustomerKyc.approvedCustomerId`, against its Layers on a fresh database (no
 * HTTP): a user whose KYC is approved gives their provider customer, anyone else is NeedsKyc, whatever the letter
 * case of the address and never across integrations. A customer the provider has not decided through a webhook is
 * asked about: a decision read that way is recorded (the row and one `kyc.approved` / `kyc.rejected`) before it is
 * the answer; a provider still reviewing, or one that cannot be asked, leaves the stored status as the answer.
 * Customers are written as verify writes them (`CustomerRepo.upsertEmail`, then `setKyc` with the provider's answer).
 */
import { IntegrationId, type KycStatus, NeedsKyc } from "@cop-integrations/contracts"
import { expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { CustomerKyc } from "../../src/kyc/CustomerKyc.ts"
import { CustomerRepo } from "../../src/kyc/CustomerRepo.ts"
import { Outbox } from "../../src/outbox/Outbox.ts"
import { PayoutProvider, ProviderUnavailable } from "../../src/provider/PayoutProvider.ts"
import { TestDatabaseMigrated } from "../support/database.ts"
import { newAddress } from "../support/http.ts"

const MINE = IntegrationId.make("int_kyc_gate")
const THEIRS = IntegrationId.make("int_kyc_gate_other")

/** What the provider says about each of its customers ("down": it cannot be asked); pending unless scripted. */
const scripts = new Map<string, KycStatus | "down">()
/** Every customer the provider was asked about, in order. */
const asked: Array<string> = []
const askedAbout = (providerCustomerId: string) => asked.filter((id) => id === providerCustomerId).length

const unused = () => Effect.die("not asked by CustomerKyc")

const ScriptedProvider = Layer.succeed(
  PayoutProvider,
  PayoutProvider.of({
    destinationsPerCustomer: false,
    usdCopRates: Effect.die("not asked by CustomerKyc"),
    createKycLink: unused,
    createExternalAccount: unused,
    createTransfer: unused,
    getTransfer: unused,
    cancelTransfer: unused,
    getCustomerKyc: (providerCustomerId) =>
      Effect.suspend(() => {
        asked.push(providerCustomerId)
        const script = scripts.get(providerCustomerId) ?? "pending"
        return script === "down"
          ? Effect.fail(new ProviderUnavailable({ reason: "scripted outage" }))
          : Effect.succeed(script)
      })
  })
)

const Integrations = Layer.effectDiscard(
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql`INSERT INTO integrations (id, name) VALUES (${MINE}, 'kyc gate'), (${THEIRS}, 'kyc gate, another')`
  )
).pipe(Layer.orDie)

const services = CustomerKyc.Default.pipe(
  Layer.provideMerge(CustomerRepo.Default),
  Layer.provideMerge(Layer.mergeAll(Outbox.Default, ScriptedProvider, Integrations)),
  Layer.provideMerge(TestDatabaseMigrated)
)

/** A new user of `integrationId` as verify leaves them: the provider's customer, with the status its link gave. */
const customer = (kycStatus: KycStatus, integrationId: IntegrationId = MINE) =>
  Effect.gen(function*() {
    const customers = yield* CustomerRepo
    const userAddress = newAddress()
    const providerCustomerId = `cus_${crypto.randomUUID()}`
    const owner = { integrationId, userAddress }
    yield* customers.upsertEmail(owner, "camila@example.com", new Date())
    yield* customers.setKyc(owner, { providerCustomerId, kycStatus, kycUrl: "https://kyc.example/camila" }, new Date())
    return { userAddress, providerCustomerId }
  })

const NOT_APPROVED =
  "KYC is not approved for this userAddress: complete kyc/otp/send and kyc/otp/verify (see /docs#error-needs_kyc)"

/** The gate's refusal (an approval fails the test with the provider customer it gave). */
const refusal = (integrationId: IntegrationId, userAddress: string) =>
  Effect.flatMap(CustomerKyc, (kyc) => Effect.flip(kyc.approvedCustomerId(integrationId, userAddress)))

const stored = (userAddress: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<{ kyc_status: string }>`
      SELECT kyc_status FROM customers WHERE integration_id = ${MINE} AND user_address = ${userAddress.toLowerCase()}`
    const events = yield* sql<{ type: string }>`
      SELECT type FROM events WHERE integration_id = ${MINE} AND resource_id = ${userAddress.toLowerCase()}
      ORDER BY sequence`
    return { status: row?.kyc_status, events: events.map((event) => event.type) }
  })

// excludeTestServices: the real clock, as the pool's and the provider read's timeouts expect.
layer(services, { excludeTestServices: true })("CustomerKyc.approvedCustomerId", (it) => {
  it.effect("gives an approved user's provider customer, whatever the address's letter case, without asking", () =>
    Effect.gen(function*() {
      const kyc = yield* CustomerKyc
      const { providerCustomerId, userAddress } = yield* customer("approved")
      expect(yield* kyc.approvedCustomerId(MINE, userAddress)).toBe(providerCustomerId)
      expect(yield* kyc.approvedCustomerId(MINE, userAddress.toLowerCase())).toBe(providerCustomerId)
      expect(askedAbout(providerCustomerId)).toBe(0)
    }))

  it.effect("gives null for an approved user the provider has no customer for", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const kyc = yield* CustomerKyc
      const userAddress = newAddress()
      yield* sql`INSERT INTO customers (integration_id, user_address, email, kyc_status, created_at, updated_at)
                 VALUES (${MINE}, ${userAddress.toLowerCase()}, 'ana@example.com', 'approved', now(), now())`
      expect(yield* kyc.approvedCustomerId(MINE, userAddress)).toBeNull()
    }))

  it.effect("is NeedsKyc for an address no OTP was sent to, one whose e-mail is all we have, and another integration's user", () =>
    Effect.gen(function*() {
      const customers = yield* CustomerRepo
      const unknown = newAddress()
      const onlyEmail = newAddress()
      yield* customers.upsertEmail({ integrationId: MINE, userAddress: onlyEmail }, "ana@example.com", new Date())
      const theirs = yield* customer("approved", THEIRS)
      for (const userAddress of [unknown, onlyEmail, theirs.userAddress]) {
        const refused = yield* refusal(MINE, userAddress)
        expect(refused).toBeInstanceOf(NeedsKyc)
        expect(refused.error).toBe(NOT_APPROVED)
      }
      expect(askedAbout(theirs.providerCustomerId)).toBe(0)
    }))

  it.effect("reads a pending user's approval from the provider, records it with one kyc.approved, then gives it", () =>
    Effect.gen(function*() {
      const kyc = yield* CustomerKyc
      const { providerCustomerId, userAddress } = yield* customer("pending")
      scripts.set(providerCustomerId, "approved")
      expect(yield* kyc.approvedCustomerId(MINE, userAddress)).toBe(providerCustomerId)
      expect(yield* stored(userAddress)).toEqual({ status: "approved", events: ["kyc.approved"] })
      // decided now: the next payout's gate reads the row, and the provider is not asked again
      expect(yield* kyc.approvedCustomerId(MINE, userAddress)).toBe(providerCustomerId)
      expect(askedAbout(providerCustomerId)).toBe(1)
      expect((yield* stored(userAddress)).events).toEqual(["kyc.approved"])
    }))

  it.effect("is NeedsKyc for a pending user the provider rejected (recorded with one kyc.rejected)", () =>
    Effect.gen(function*() {
      const { providerCustomerId, userAddress } = yield* customer("pending")
      scripts.set(providerCustomerId, "rejected")
      expect(yield* refusal(MINE, userAddress)).toBeInstanceOf(NeedsKyc)
      expect(yield* stored(userAddress)).toEqual({ status: "rejected", events: ["kyc.rejected"] })
    }))

  it.effect("is NeedsKyc, the stored status standing, while the provider still reviews or cannot be asked", () =>
    Effect.gen(function*() {
      for (const script of ["pending", "down"] as const) {
        const { providerCustomerId, userAddress } = yield* customer("pending")
        scripts.set(providerCustomerId, script)
        expect(yield* refusal(MINE, userAddress)).toBeInstanceOf(NeedsKyc)
        expect(askedAbout(providerCustomerId)).toBe(1)
        expect(yield* stored(userAddress)).toEqual({ status: "pending", events: [] })
      }
    }))
})
