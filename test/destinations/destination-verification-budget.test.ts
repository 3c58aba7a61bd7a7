/**
 * Destination verifications (issue #28, item 3): every path that asks the provider to verify a Bre-B key and holder
 * name (the payee preview, and payout creation without a reusable `previewId`) reveals whether the name matches and
 * the holder's data, so all of them spend one budget per integration, PREVIEW_RATE_LIMIT_PER_MINUTE a minute, shared
 * by every replica through the database. Over it: 429 with Retry-After, before the provider is asked. A payout that
 * reuses a previewId, a replay of a create, and anything refused before the provider answers spend nothing.
 *
 * Two app instances serve one database (two replicas); the mock provider is wrapped to count verifications. With a
 * budget of 2 a minute a token comes back every 30 s: each test's requests take far less than that, and the refill
 * is shown by moving the bucket's time back (as that much time passing would), not by waiting.
 */
import { Effect, Layer } from "effect"
import { describe, expect } from "vitest"
import { mockMode, serverLayerFor } from "../../src/App.ts"
import { PayoutProvider } from "../../src/provider/PayoutProvider.ts"
import { ProviderMock } from "../../src/provider/mock/ProviderMock.ts"
import { httpTest } from "../support/fixture.ts"
import {
  BREB,
  call,
  expectBadRequest,
  expectError,
  newAddress,
  newPartner,
  type Partner,
  PAYOUTS,
  payoutBody,
  sql,
  type Wire
} from "../support/flows.ts"
import type { TestServer } from "../support/server.ts"

const PREVIEW = `${BREB}/destinations/preview`
const LIMIT = 2
const LIMITED = `destination verifications are limited to ${LIMIT} a minute per integration`

const provider = { verifications: 0 }

const CountingProvider = Layer.effect(
  PayoutProvider,
  Effect.map(PayoutProvider, (base) => ({
    ...base,
    createExternalAccount: (input: Parameters<typeof base.createExternalAccount>[0]) =>
      Effect.andThen(Effect.sync(() => void provider.verifications++), base.createExternalAccount(input))
  }))
).pipe(Layer.provide(ProviderMock))

// `server` and its `replica`: two app instances on one database, both counting their provider's verifications
const it = httpTest({
  env: { PREVIEW_RATE_LIMIT_PER_MINUTE: String(LIMIT) },
  app: (config) => {
    const mode = mockMode(config)
    return serverLayerFor(config, { ...mode, ports: Layer.merge(mode.ports, CountingProvider) })
  }
})

/** A fresh Bre-B key per call: distinct destinations, as an oracle's lookups would be. */
let keys = 0
const newKey = () => `@budget${process.pid}n${++keys}`

const previewOn = (
  server: TestServer,
  partner: Partner,
  body: Record<string, unknown> = {},
  headers: Record<string, string> = {}
) =>
  call(server.baseUrl, partner.apiKey, "POST", PREVIEW, {
    body: { breBKey: newKey(), accountOwnerName: "Maria Perez", ...body },
    headers
  })

const payoutOn = (
  server: TestServer,
  partner: Partner,
  user: string,
  overrides: Record<string, unknown> = {},
  headers: Record<string, string> = {}
) =>
  call(server.baseUrl, partner.apiKey, "POST", PAYOUTS, {
    body: { ...payoutBody(user, { breBKey: newKey() }), ...overrides },
    headers
  })

/** The documented refusal: 429, Retry-After in whole seconds, an ErrorBody naming the limit. */
const expectLimited = (wire: Wire) => {
  expect(expectError(wire, 429)).toContain(LIMITED)
  const retryAfter = Number(wire.headers.get("retry-after"))
  expect(retryAfter).toBeGreaterThanOrEqual(1)
  expect(retryAfter).toBeLessThanOrEqual(60 / LIMIT)
}

/** As if `seconds` had passed for the integration's budget: its bucket's time moves back. */
const letTimePass = (server: TestServer, partner: Partner, seconds: number) =>
  sql(
    server,
    (q) =>
      q`UPDATE destination_verification_budgets SET full_at = full_at - ${seconds} * interval '1 second'
        WHERE integration_id = ${partner.integrationId} RETURNING integration_id`
  ).then((rows) => expect(rows).toHaveLength(1))

describe("one destination verification budget per integration", () => {
  // each test makes a partner of its own (not the fixture's): the budget is per integration
  it("with the preview budget spent, payouts to distinct destinations are 429 without reaching the provider", async ({ server: first }) => {
    const partner = await newPartner(first)
    const user = await partner.approvedUser()
    for (let i = 0; i < LIMIT; i++) expect((await previewOn(first, partner)).status).toBe(200)

    const before = provider.verifications
    for (let i = 0; i < 3; i++) expectLimited(await payoutOn(first, partner, user))
    expect(provider.verifications, "no verification once the budget is spent").toBe(before)
    // and the other way round: the previews are refused as well
    expectLimited(await previewOn(first, partner))
  })

  it("two replicas on one database together allow the budget once, not once each", async ({ server: first, replica: second }) => {
    const partner = await newPartner(first)
    const user = await partner.approvedUser()
    const before = provider.verifications
    const answers = await Promise.all(
      [first, second].flatMap((server) => [
        previewOn(server, partner),
        previewOn(server, partner),
        payoutOn(server, partner, user),
        payoutOn(server, partner, user)
      ])
    )
    const allowed = answers.filter((answer) => answer.status === 200 || answer.status === 201)
    expect(allowed, answers.map((answer) => `${answer.status} ${answer.text}`).join("\n")).toHaveLength(LIMIT)
    for (const refused of answers.filter((answer) => !allowed.includes(answer))) expectLimited(refused)
    expect(provider.verifications - before).toBe(LIMIT)
  })

  it("refills at PREVIEW_RATE_LIMIT_PER_MINUTE / 60 a second, up to PREVIEW_RATE_LIMIT_PER_MINUTE", async ({ server: first, replica: second }) => {
    const partner = await newPartner(first)
    for (let i = 0; i < LIMIT; i++) expect((await previewOn(first, partner)).status).toBe(200)
    expectLimited(await previewOn(second, partner))

    await letTimePass(first, partner, 60 / LIMIT) // one token's worth
    expect((await previewOn(second, partner)).status).toBe(200)
    expectLimited(await previewOn(first, partner))

    await letTimePass(first, partner, 3600) // an idle hour fills the bucket, no more
    for (let i = 0; i < LIMIT; i++) expect((await previewOn(second, partner)).status).toBe(200)
    expectLimited(await previewOn(first, partner))
  })

  it("a payout reusing a previewId and the replay of a create spend nothing", async ({ server: first, replica: second }) => {
    const partner = await newPartner(first)
    const user = await partner.approvedUser()
    const before = provider.verifications
    const breBKey = newKey()
    const preview = await previewOn(first, partner, { breBKey })
    expect(preview.status, preview.text).toBe(200)
    const { previewId } = preview.json as { previewId: string }

    const reuses: ReadonlyArray<readonly [TestServer, string]> = [
      [first, "reuse-1"],
      [second, "reuse-2"],
      [second, "reuse-1"],
      [first, "reuse-3"]
    ]
    for (const [server, key] of reuses) {
      const created = await payoutOn(server, partner, user, { breBKey, previewId }, { "idempotency-key": key })
      expect(created.status, created.text).toBe(201)
    }
    const plain = payoutBody(user, { breBKey: newKey() })
    const createPlain = (server: TestServer) =>
      call(server.baseUrl, partner.apiKey, "POST", PAYOUTS, { body: plain, headers: { "idempotency-key": "plain" } })
    const created = await createPlain(first)
    expect(created.status, created.text).toBe(201)
    for (const server of [second, first, second]) {
      const replay = await createPlain(server)
      expect(replay.headers.get("idempotent-replayed"), replay.text).toBe("true")
      expect(replay.text).toBe(created.text)
    }
    expect(provider.verifications - before, "the preview and the plain payout").toBe(LIMIT)

    // the budget is spent: a new destination is refused, the previewed one still goes through
    expectLimited(await payoutOn(second, partner, user))
    const again = await payoutOn(second, partner, user, { breBKey, previewId })
    expect(again.status, again.text).toBe(201)
  })

  it("requests refused before the provider verifies spend nothing", async ({ server: first, replica: second }) => {
    const partner = await newPartner(first)
    const user = await partner.approvedUser()
    const unapproved = newAddress()
    const before = provider.verifications

    expectError(await previewOn(first, partner, { userAddress: unapproved }), 409, "needs_kyc")
    expectError(await payoutOn(second, partner, unapproved), 409, "needs_kyc")
    expectError(await payoutOn(first, partner, user, { destinationCop: "1000" }), 409, "below_minimum")
    const closed = await payoutOn(second, partner, user, {}, { "x-mock-scenario": "market_closed" })
    expectError(closed, 409, "mercado_cerrado")
    expectBadRequest(await payoutOn(first, partner, user, { previewId: "pv_0000000000000000000000" }), "previewId")
    expect(provider.verifications, "none of them reached the provider").toBe(before)

    // the provider was asked but did not answer: nothing was verified
    const unavailable = { "x-mock-scenario": "provider_unavailable" }
    expectError(await previewOn(second, partner, {}, unavailable), 503)
    expectError(await payoutOn(first, partner, user, {}, unavailable), 503)

    for (let i = 0; i < LIMIT; i++) expect((await previewOn(first, partner)).status).toBe(200)
    expectLimited(await previewOn(second, partner))
  })
})
