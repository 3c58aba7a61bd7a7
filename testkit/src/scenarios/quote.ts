import { Effect } from "effect"
import { ok, rejected } from "../api.ts"
import { check, checkEqual, checkNamesField, checkTimestamps, pollUntil } from "../check.ts"
import { expectedRateOnly, providerMinimumBoundary } from "../expected.ts"
import { show } from "../failure.ts"
import { compare, decimal, format, sameValue, show as showDecimal } from "../money.ts"
import { type Kit, scenario } from "../scenario.ts"
import { checkAmounts } from "./amounts.ts"

const quote = (
  kit: Kit,
  query: Readonly<Record<string, string>> = {},
  headers: Readonly<Record<string, string>> = {}
) => kit.call("quote", { query, headers })

const quoteValue = (kit: Kit, query: Readonly<Record<string, string>> = {}) =>
  Effect.flatMap(quote(kit, query), (reply) => Effect.map(ok(reply, "200 Quote"), (value) => ({ value, reply })))

const CACHE_RULE =
  "cached is false when the call fetched the rate, true when served from the cache; a first call is false"

const LEG_CODES = ["bridge", "bridge_fx", "copby"]

export const quoteScenarios = [
  scenario({
    id: "QUOTE-001",
    title: "a first quote call is cached:false, and the call right after it is served from the cache",
    rules: ["R-QUOTE-1"],
    tags: ["quote", "cache", "read-only"],
    runFirst: true,
    run: (kit) =>
      Effect.gen(function*() {
        const first = yield* quoteValue(kit)
        if (first.value.cached) {
          // Served from a cache something else warmed: wait for the next fetch (one cache TTL at most).
          kit.note("firstQuoteCached", true)
          yield* pollUntil(
            kit,
            {
              rule: CACHE_RULE,
              expected:
                "a quote with cached:false: the first call on a fresh deployment, or the first after the cache TTL",
              intervalMs: 1000,
              describe: (last) => `every quote said cached:true (last ${show(last.value)})`,
              exchange: (last) => last.reply.exchange
            },
            quoteValue(kit),
            (next) => !next.value.cached
          )
        }
        const second = yield* quoteValue(kit)
        yield* check(second.value.cached, CACHE_RULE, {
          expected: "cached:true on the call right after a fetch",
          actual: show(second.value),
          exchange: second.reply.exchange
        })
      })
  }),
  scenario({
    id: "QUOTE-002",
    title: "a quote without an amount shows the rate every amount gets: E = S × 0.995 / 1.01, display E to 2 decimals",
    rules: ["R-MONEY-1"],
    tags: ["quote", "money", "read-only"],
    run: (kit) =>
      Effect.gen(function*() {
        const { reply, value } = yield* quoteValue(kit)
        const expected = expectedRateOnly(decimal(value.sellRateUsdCop))
        yield* checkEqual("the default fromToken is USDC", value.fromToken, "USDC", reply.exchange)
        yield* check(
          compare(decimal(value.effectiveUsdCop), expected.effectiveUsdCop) === 0,
          "effectiveUsdCop without an amount is S × 0.995 / 1.01 rounded down to 6 decimals",
          { expected: showDecimal(expected.effectiveUsdCop), actual: value.effectiveUsdCop, exchange: reply.exchange }
        )
        yield* checkEqual(
          "display is `1 USD = <E rounded down to 2 decimals> COP`",
          value.display,
          expected.display,
          reply.exchange
        )
        yield* check(
          value.destinationCop === undefined && value.sourceAmount === undefined && value.fees === undefined,
          "amount fields appear only when destinationCop is given",
          { expected: "no destinationCop, sourceAmount or fees", actual: show(value), exchange: reply.exchange }
        )
        yield* checkTimestamps(
          "timestamps are ISO 8601 UTC with milliseconds",
          { expiresAt: value.expiresAt },
          reply.exchange
        )
        yield* check(Date.parse(value.expiresAt) > Date.now() - 60_000, "a fresh quote has not expired", {
          expected: "expiresAt in the future",
          actual: value.expiresAt,
          exchange: reply.exchange
        })
        const other = yield* quoteValue(kit)
        yield* check(other.value.quoteId !== value.quoteId && value.quoteId !== "", "each quote has its own quoteId", {
          expected: "two different, non-empty quoteIds",
          actual: `${value.quoteId}, ${other.value.quoteId}`,
          exchange: other.reply.exchange
        })
      })
  }),
  scenario({
    id: "QUOTE-003",
    title: "a quote with destinationCop prices it: sourceAmount T, the fee legs, E and display consistent with S",
    rules: ["R-MONEY-1", "R-PAYOUT-2"],
    tags: ["quote", "money", "read-only"],
    run: (kit) =>
      Effect.gen(function*() {
        const { reply, value } = yield* quoteValue(kit, { destinationCop: "250000" })
        yield* check(sameValue(value.destinationCop ?? "0", "250000"), "destinationCop is echoed", {
          expected: "250000",
          actual: show(value.destinationCop),
          exchange: reply.exchange
        })
        const fees = value.fees ?? []
        yield* checkEqual(
          "a USDC quote itemizes the bridge_fx, bridge and copby legs, all quoted",
          fees.map((leg) => `${leg.code}:${leg.status}`).sort(),
          LEG_CODES.map((code) => `${code}:quoted`),
          reply.exchange
        )
        yield* checkAmounts(
          {
            destinationCop: value.destinationCop ?? "",
            sellRateUsdCop: value.sellRateUsdCop,
            deposit: undefined,
            totalPaid: value.sourceAmount ?? "",
            fees,
            effectiveUsdCop: value.effectiveUsdCop,
            display: value.display
          },
          kit.mode,
          reply.exchange
        )
      })
  }),
  scenario({
    id: "QUOTE-004",
    title: "a quote below the 4000 COP minimum is 409 below_minimum",
    rules: ["R-MONEY-2"],
    tags: ["quote", "errors", "limits", "read-only"],
    run: (kit) =>
      Effect.flatMap(
        quote(kit, { destinationCop: "3999.99" }),
        (reply) => rejected(reply, 409, "below_minimum", "destinationCop < 4000 is below_minimum")
      )
  }),
  scenario({
    id: "QUOTE-005",
    title: "a quote that would send the provider less than 2 USD is 409 below_minimum; 2 USD is enough",
    rules: ["R-MONEY-2"],
    tags: ["quote", "errors", "limits", "read-only"],
    run: (kit) =>
      Effect.gen(function*() {
        const { value } = yield* quoteValue(kit)
        const boundary = providerMinimumBoundary(decimal(value.sellRateUsdCop))
        const cases = { below: format(boundary.below, 0), enough: format(boundary.enough, 0) }
        kit.note("providerMinimumCases", cases)
        if (compare(boundary.below, decimal("4000")) >= 0) {
          const reply = yield* quote(kit, { destinationCop: cases.below })
          yield* rejected(
            reply,
            409,
            "below_minimum",
            `D ${cases.below} at S ${value.sellRateUsdCop} sends the provider < 2 USD`
          )
        }
        const enough = yield* quote(kit, { destinationCop: cases.enough })
        yield* ok(enough, `a quote of D ${cases.enough}, which sends the provider ≥ 2 USD`)
      })
  }),
  scenario({
    id: "QUOTE-006",
    title: "with the market closed a quote with an amount is 409 mercado_cerrado",
    rules: ["R-MOCK-1"],
    tags: ["quote", "errors"],
    requires: { mock: true },
    run: (kit) =>
      Effect.flatMap(
        quote(kit, { destinationCop: "100000" }, { "X-Mock-Scenario": "market_closed" }),
        (reply) => rejected(reply, 409, "mercado_cerrado", "a closed market is mercado_cerrado")
      )
  }),
  scenario({
    id: "QUOTE-007",
    title: "a quote above the Bre-B per-transfer cap is 400 naming destinationCop",
    rules: ["R-MONEY-3"],
    tags: ["quote", "validation", "limits", "read-only"],
    run: (kit) =>
      Effect.gen(function*() {
        const reply = yield* quote(kit, { destinationCop: "1000000000000" })
        const error = yield* rejected(reply, 400, "none", "1e12 COP is above any Bre-B cap")
        yield* checkNamesField("the 400 names destinationCop", error, "destinationCop", reply.exchange)
      })
  }),
  scenario({
    id: "QUOTE-008",
    title: "fromToken USDC is accepted explicitly; an unsupported token is 400",
    rules: ["R-QUOTE-2"],
    tags: ["quote", "validation", "read-only"],
    run: (kit) =>
      Effect.gen(function*() {
        const { reply, value } = yield* quoteValue(kit, { fromToken: "USDC" })
        yield* checkEqual("the quote is for the token asked", value.fromToken, "USDC", reply.exchange)
        const unsupported = yield* quote(kit, { fromToken: "DOGE" })
        const error = yield* rejected(unsupported, 400, "none", "an unsupported fromToken is 400")
        yield* checkNamesField("the 400 names fromToken", error, "fromToken", unsupported.exchange)
      })
  })
]
