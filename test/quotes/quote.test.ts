import { SqlClient } from "effect/sql"
import { MercadoCerrado, Quote, ServiceUnavailable } from "@cop-integrations/contracts"
import { Effect, Schema } from "effect"
import { describe, expect } from "vitest"
import { httpTest } from "../support/fixture.ts"
import { expectContractEncoding, type Partner } from "../support/flows.ts"
import { BREB, call, expectErrorBody, failureOf } from "../support/http.ts"
import { clientExit, type TestServer, withClient } from "../support/server.ts"

/**
 * Expected amounts are computed here from DESIGN §3 "Money math" with bigint rationals, independently of
 * src/money: S, M are the mock rates this file configures, USDC has 6 decimals.
 */
const SELL = "3957.25"
const MID = "4011.80"
const TOKEN_DECIMALS = 6
const BREB_CAP = "11552000"

interface Ratio {
  readonly n: bigint
  readonly d: bigint
}
const ratio = (text: string): Ratio => {
  const match = /^(\d+)(?:\.(\d+))?$/.exec(text)
  if (match === null) throw new Error(`not a plain decimal: ${text}`)
  const fraction = match[2] ?? ""
  return { n: BigInt(`${match[1]}${fraction}`), d: 10n ** BigInt(fraction.length) }
}
const ceilDiv = (a: bigint, b: bigint) => (a + b - 1n) / b
const halfUpDiv = (a: bigint, b: bigint) => (2n * a + b) / (2n * b)
/** `units` of 10^-decimals as a fixed-point string. */
const fixed = (units: bigint, decimals: number) => {
  const text = units.toString().padStart(decimals + 1, "0")
  return decimals === 0 ? text : `${text.slice(0, -decimals)}.${text.slice(-decimals)}`
}
/** A wire amount as base units (rejects more fraction digits than `decimals`). */
const units = (text: string, decimals: number) => {
  const { n, d } = ratio(text)
  const scale = 10n ** BigInt(decimals)
  expect(scale % d, `${text} has more than ${decimals} decimals`).toBe(0n)
  return (n * scale) / d
}

const S = ratio(SELL)
const M = ratio(MID)
const ONE_TOKEN = 10n ** BigInt(TOKEN_DECIMALS)
const RATE_UNIT = 10n ** 6n

/** Every amount DESIGN §3 defines for a payout of D COP, in base units (rates in 10^-6 COP). */
const expectedPricing = (destinationCop: string) => {
  const D = ratio(destinationCop)
  // X = D / (0.995 × S), rounded up
  const deposit = ceilDiv(D.n * S.d * 1000n * ONE_TOKEN, D.d * 995n * S.n)
  const bridge = ceilDiv(deposit * 5n, 1000n)
  // (X − bridge) × (1 − S/M) = (X − bridge) × (M − S) / M, rounded half-up
  const bridgeFx = halfUpDiv((deposit - bridge) * (M.n * S.d - S.n * M.d), S.d * M.n)
  const copby = ceilDiv(deposit, 100n)
  const total = deposit + copby
  const effective = (D.n * ONE_TOKEN * RATE_UNIT) / (D.d * total)
  return { deposit, bridge, bridgeFx, copby, total, effective }
}

/** "1 USD = <E rounded down to 2 decimals> COP" for E in 10^-6 COP. */
const displayOf = (effective: bigint) => `1 USD = ${fixed(effective / 10n ** 4n, 2)} COP`

/** The smallest D (in cents) whose deposit X reaches the provider minimum of 2 USD. */
const smallestCentsForProviderMinimum = () => {
  // ceil(c × K / L) ≥ 2·10^6  ⇔  c × K > (2·10^6 − 1) × L
  const K = S.d * 1000n * ONE_TOKEN
  const L = 100n * 995n * S.n
  return ((2n * ONE_TOKEN - 1n) * L) / K + 1n
}

// The rate is read from the shared row on every request: these tests age the row by hand.
const it = httpTest({
  env: { MOCK_USD_COP_SELL: SELL, MOCK_USD_COP_MID: MID, BREB_MAX_COP: BREB_CAP, RATE_CACHE_IN_MEMORY: "false" }
})

const quote = (server: TestServer, partner: Partner, query = "", headers: Record<string, string> = {}) =>
  call(server, `${BREB}/quote${query}`, { apiKey: partner.apiKey, headers })

const decodeQuote = Schema.decodeUnknownSync(Quote)

describe("GET quote", () => {
  // First in the file: nothing has fetched a rate on this fresh database yet.
  it("is cached:false on the first call, cached:true within the TTL, and refreshes after it", async ({ server, partner }) => {
    const first = await quote(server, partner)
    expect(first.status, first.text).toBe(200)
    expect(decodeQuote(first.body).cached).toBe(false)
    const second = await quote(server, partner)
    expect(decodeQuote(second.body).cached).toBe(true)
    // the cache is shared through the database, so other integrations see it too
    const { apiKey: otherKey } = await server.newIntegration()
    const other = await call(server, `${BREB}/quote`, { apiKey: otherKey })
    expect(decodeQuote(other.body).cached).toBe(true)
    // age the cached row past the TTL instead of waiting for it
    await server.run(Effect.flatMap(
      SqlClient.SqlClient,
      (sql) => sql`UPDATE rate_cache SET fetched_at = fetched_at - interval '1 hour'`
    ))
    expect(decodeQuote((await quote(server, partner)).body).cached).toBe(false)
    expect(decodeQuote((await quote(server, partner)).body).cached).toBe(true)
  })

  it("without an amount: matches the contract, display is E rounded down, E = S × 0.995 / 1.01", async ({ server, partner }) => {
    const answer = await quote(server, partner)
    expect(answer.status, answer.text).toBe(200)
    const body = decodeQuote(answer.body)
    expect(body.sourceAmount).toBeUndefined()
    expect(body.fees).toBeUndefined()
    expect(body.fromToken).toBe("USDC")
    expect(body.sellRateUsdCop).toMatch(/^\d+(\.\d+)?$/)
    expect(units(body.sellRateUsdCop, 6)).toBe(units(SELL, 6))
    const effective = (S.n * 995n * 100n * RATE_UNIT) / (S.d * 1000n * 101n)
    expect(units(body.effectiveUsdCop, 6)).toBe(effective)
    expect(body.display).toMatch(/^1 USD = \d+\.\d{2} COP$/)
    expect(body.display).toBe(displayOf(effective))
    expect(Date.parse(body.expiresAt)).toBeGreaterThan(Date.now())
  })

  // The quote is answered as QuoteService builds it, not encoded again through the contract (src/http/BrebHttp.ts).
  it("is answered in the contract's encoding: the rate only, with an amount, from COPm", async ({ server, partner }) => {
    for (const query of ["", "?destinationCop=250000", "?destinationCop=4000000.55&fromToken=COPm"]) {
      const answer = await quote(server, partner, query)
      expectContractEncoding(Quote, { status: answer.status, text: answer.text, json: answer.body })
    }
  })

  it("with destinationCop: amounts and fee legs follow the money math exactly", async ({ server, partner }) => {
    for (const destinationCop of ["250000", "4000000.55", "123457.01"]) {
      const answer = await quote(server, partner, `?destinationCop=${destinationCop}`)
      expect(answer.status, answer.text).toBe(200)
      const body = decodeQuote(answer.body)
      const want = expectedPricing(destinationCop)
      expect(units(body.destinationCop!, 2)).toBe(units(destinationCop, 2))
      expect(body.sourceAmount).toMatch(/^\d+\.\d{6}$/)
      expect(units(body.sourceAmount!, TOKEN_DECIMALS)).toBe(want.total)
      expect(units(body.effectiveUsdCop, 6)).toBe(want.effective)
      expect(body.display).toMatch(/^1 USD = \d+\.\d{2} COP$/)
      expect(body.display).toBe(displayOf(want.effective))

      const fees = body.fees!
      expect(fees.map((leg) => leg.code).sort()).toEqual(["bridge", "bridge_fx", "copby"])
      expect(fees.every((leg) => leg.status === "quoted")).toBe(true)
      const leg = (code: string) => units(fees.find((l) => l.code === code)!.amountUsd, TOKEN_DECIMALS)
      expect({ bridge: leg("bridge"), bridge_fx: leg("bridge_fx"), copby: leg("copby") }).toEqual({
        bridge: want.bridge,
        bridge_fx: want.bridgeFx,
        copby: want.copby
      })
      // sourceAmount = deposit X + service fee F, and the recipient gets at least D at the sell rate
      const deposit = units(body.sourceAmount!, TOKEN_DECIMALS) - leg("copby")
      expect(deposit).toBe(want.deposit)
      const D = ratio(destinationCop)
      expect(deposit * 995n * S.n * D.d).toBeGreaterThanOrEqual(D.n * 1000n * S.d * ONE_TOKEN)
    }
  })

  it("is served to the typed client as a Quote", async ({ server, partner }) => {
    const body = await withClient(
      server.baseUrl,
      partner.apiKey,
      (client) => client.breb.quote({ query: { destinationCop: "250000" }, headers: {} })
    )
    expect(body.sourceAmount).toBe(fixed(expectedPricing("250000").total, TOKEN_DECIMALS))
  })

  it("answers 409 below_minimum under 4000 COP and under the 2 USD provider minimum", async ({ server, partner }) => {
    expectErrorBody(await quote(server, partner, "?destinationCop=3999.99"), 409, "below_minimum")
    expectErrorBody(await quote(server, partner, "?destinationCop=1"), 409, "below_minimum")
    const cents = smallestCentsForProviderMinimum()
    const justBelow = fixed(cents - 1n, 2)
    const enough = fixed(cents, 2)
    expect(units(justBelow, 2)).toBeGreaterThanOrEqual(400000n) // the COP minimum itself is met
    expectErrorBody(await quote(server, partner, `?destinationCop=${justBelow}`), 409, "below_minimum")
    const ok = await quote(server, partner, `?destinationCop=${enough}`)
    expect(ok.status, ok.text).toBe(200)
    expect(units(decodeQuote(ok.body).sourceAmount!, TOKEN_DECIMALS)).toBe(expectedPricing(enough).total)
  })

  it("accepts the Bre-B cap and answers 400 naming destinationCop above it", async ({ server, partner }) => {
    expect((await quote(server, partner, `?destinationCop=${BREB_CAP}`)).status).toBe(200)
    for (const above of [`${BREB_CAP}.01`, "11552001", "999999999999"]) {
      const body = expectErrorBody(await quote(server, partner, `?destinationCop=${above}`), 400)
      expect(body.error).toContain("destinationCop")
    }
  })

  it("answers 400 naming destinationCop for malformed amounts", async ({ server, partner }) => {
    for (const bad of ["1e5", "-5", "12.345", "abc", "+5000", " 5000", "5000 ", "0", "0.00", "5,000", ""]) {
      const body = expectErrorBody(await quote(server, partner, `?destinationCop=${encodeURIComponent(bad)}`), 400)
      expect(body.error, JSON.stringify(bad)).toContain("destinationCop")
    }
  })

  it("answers 400 naming fromToken for an unsupported token", async ({ server, partner }) => {
    const body = expectErrorBody(await quote(server, partner, "?fromToken=DOGE"), 400)
    expect(body.error).toContain("fromToken")
  })
})

describe("mock scenarios on quote", () => {
  it("market_closed → 409 mercado_cerrado, with and without an amount", async ({ server, partner }) => {
    const scenario = { "x-mock-scenario": "market_closed" }
    expectErrorBody(await quote(server, partner, "", scenario), 409, "mercado_cerrado")
    expectErrorBody(await quote(server, partner, "?destinationCop=250000", scenario), 409, "mercado_cerrado")
    const exit = await clientExit(
      server.baseUrl,
      partner.apiKey,
      (client) => client.breb.quote({ query: {}, headers: { "x-mock-scenario": "market_closed" } })
    )
    expect(failureOf(exit)).toBeInstanceOf(MercadoCerrado)
  })

  it("provider_unavailable → 503 ErrorBody without errorCode", async ({ server, partner }) => {
    // age the cache so the provider has to be asked
    await server.run(Effect.flatMap(
      SqlClient.SqlClient,
      (sql) => sql`UPDATE rate_cache SET fetched_at = fetched_at - interval '1 hour'`
    ))
    expectErrorBody(await quote(server, partner, "", { "x-mock-scenario": "provider_unavailable" }), 503)
    const exit = await clientExit(
      server.baseUrl,
      partner.apiKey,
      (client) =>
        client.breb.quote({
          query: { destinationCop: "250000" },
          headers: { "x-mock-scenario": "provider_unavailable" }
        })
    )
    expect(failureOf(exit)).toBeInstanceOf(ServiceUnavailable)
  })

  it("answers 400 for an unknown scenario", async ({ server, partner }) => {
    const body = expectErrorBody(await quote(server, partner, "", { "x-mock-scenario": "sunny_day" }), 400)
    expect(body.error.toLowerCase()).toContain("x-mock-scenario")
  })

  it("checks the header on every route but the probes, as API-level middleware inside the ErrorBody one", async ({ server, partner }) => {
    const answer = await call(server, "/api/integrations/events", {
      apiKey: partner.apiKey,
      headers: { "x-mock-scenario": "sunny_day" }
    })
    expectErrorBody(answer, 400)
    expect(answer.headers.get("x-request-id")).toMatch(/^req_/)
  })
})
