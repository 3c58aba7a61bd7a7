/**
 * The money rules of DESIGN §3, each a property over 1,000 generated payouts (USDC and COPm) priced by the service's
 * own path (the one GET quote and payout creation share) and checked against an exact-rational reference. The
 * definitions live in properties.ts; `npm run money:check -- --cases 1000000` runs the same ones over a million cases.
 */
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import { evaluate, MONEY_PROPERTIES, moneyCaseArb, showCase } from "../../scripts/moneyProperties/properties.ts"

const RUNS = { numRuns: 1000 }

describe("money properties (the cases money:check runs by the million)", () => {
  it.each(MONEY_PROPERTIES.map((property) => [property.name, property] as const))("%s", (_name, property) => {
    fc.assert(
      fc.property(moneyCaseArb, (c) => {
        const violation = property.check(evaluate(c))
        if (violation !== undefined) throw new Error(`${property.rule}\n${violation}\ncase ${showCase(c)}`)
      }),
      RUNS
    )
  })

  it("the cases reach every branch: both tokens, both minimums, S above and below M, a buffer, 18-decimal USD, firm COPm quotes", () => {
    const cases = fc.sample(moneyCaseArb, { numRuns: 1000, seed: 7 }).map(evaluate)
    const seen = (predicate: (e: ReturnType<typeof evaluate>) => boolean) => cases.filter(predicate).length
    expect({
      usdc: seen((e) => e.c.fromToken === "USDC" && e.outcome._tag === "Priced") > 100,
      copm: seen((e) => e.c.fromToken === "COPm" && e.outcome._tag === "Priced") > 100,
      destinationMinimum: seen((e) => e.usd.belowMinimum === "destination") > 10,
      providerMinimum: seen((e) => e.usd.belowMinimum === "provider") > 0,
      sellAboveMid: seen((e) =>
        e.c.sell.units * 10n ** BigInt(e.c.mid.scale) >= e.c.mid.units * 10n ** BigInt(e.c.sell.scale)
      ) > 10,
      buffer: seen((e) => e.c.rateBufferBps > 0) > 100,
      usd18: seen((e) => e.c.usdDecimals === 18) > 100,
      firmQuote: seen((e) => e.c.quoted?._tag === "Covers" && e.outcome._tag === "Priced") > 50,
      firmQuoteShort: seen((e) => e.c.quoted?._tag === "Short" && e.outcome._tag === "Refused") > 10
    }).toEqual({
      usdc: true,
      copm: true,
      destinationMinimum: true,
      providerMinimum: true,
      sellAboveMid: true,
      buffer: true,
      usd18: true,
      firmQuote: true,
      firmQuoteShort: true
    })
  })
})
