/**
 * The COPm a payout funded from COPm sells (CopmFunding.sizeSwap, through the mock route): the least whose route's
 * minAmountOut covers X, at COPm's smallest unit. The route's own answers are the judge: the sold amount covers X and
 * one base unit less does not. Cases: X from 2 USD to the Bre-B cap's worth, M from 1,000 to 10,000 COP per USD with
 * 0 to 6 fraction digits, the route's fee 0 to 1,000 bps (MOCK_SWAP_FEE_BPS's range), slippage 1 to 500 bps, the USD
 * token at 6 decimals, sometimes 18.
 */
import { BigDecimal, Effect, Logger, Option } from "effect"
import * as fc from "fast-check"
import { getAddress } from "viem"
import { describe, expect, it } from "vitest"
import type { TokenInfo } from "../../src/chain/Tokens.ts"
import { sizeSwap } from "../../src/pricing/CopmFunding.ts"
import { SwapRouter } from "../../src/router/SwapRouter.ts"
import { mockRouteQuote, mockRouter } from "../../src/router/SwapRouterMock.ts"

const copm: TokenInfo = {
  symbol: "COPm",
  chain: "celo",
  address: getAddress("0x8A567e2aE79CA692Bd748aB832081C45de4041eA"),
  decimals: 18
}
const usdcOf = (decimals: number): TokenInfo => ({
  symbol: "USDC",
  chain: "celo",
  address: getAddress("0xcebA9300f2b948710d2653dD7B07f33A8B32118C"),
  decimals
})
const router = getAddress("0x5555555555555555555555555555555555555555")
const taker = getAddress("0x3333333333333333333333333333333333333333")

const caseArb = fc.record({
  usdDecimals: fc.constantFrom(6, 6, 6, 18),
  neededMicros: fc.bigInt({ min: 2_000_000n, max: 12_000_000_000n }),
  neededExtra: fc.bigInt({ min: 0n, max: 10n ** 12n - 1n }),
  midScale: fc.integer({ min: 0, max: 6 }),
  midUnits: fc.bigInt({ min: 1_000n, max: 10_000n }),
  midFraction: fc.bigInt({ min: 0n, max: 999_999n }),
  feeBps: fc.oneof(fc.integer({ min: 0, max: 100 }), fc.integer({ min: 0, max: 1000 })),
  slippageBps: fc.oneof(fc.constant(50), fc.integer({ min: 1, max: 500 }))
}).map((c) => {
  const usdc = usdcOf(c.usdDecimals)
  // X in the USD token's units: micro-dollars, plus finer digits when it has 18 decimals
  const needed = c.usdDecimals === 6 ? c.neededMicros : c.neededMicros * 10n ** 12n + c.neededExtra
  const midRate = BigDecimal.make(
    c.midUnits * 10n ** BigInt(c.midScale) + (c.midFraction % 10n ** BigInt(c.midScale)),
    c.midScale
  )
  return { usdc, needed, midRate, feeBps: c.feeBps, slippageBps: c.slippageBps }
})

type Case = typeof caseArb extends fc.Arbitrary<infer C> ? C : never

const routeOf = (c: Case) => ({ midRate: c.midRate, feeBps: c.feeBps, router })

/** What the mock route answers for selling `sellAmount` COPm: the judge of "covers X". */
const minOutFor = (c: Case, sellAmount: bigint) =>
  mockRouteQuote(routeOf(c), {
    sellToken: copm,
    buyToken: c.usdc,
    sellAmount,
    taker,
    recipient: taker,
    slippageBps: c.slippageBps
  })
    .minBuyAmount

const sized = (c: Case) =>
  Effect.runSync(
    sizeSwap({
      copm,
      usdc: c.usdc,
      needed: c.needed,
      midRate: c.midRate,
      taker,
      recipient: taker,
      slippageBps: c.slippageBps
    }).pipe(
      Effect.provideService(SwapRouter, mockRouter(routeOf(c)))
    )
  )

/** Sized through a route whose `leastSellAmount` is the one given; with the warnings it logged. */
const sizedWithout = (c: Case, leastSellAmount: SwapRouter["Service"]["leastSellAmount"]) => {
  const warnings: Array<string> = []
  const capture = Logger.layer([Logger.make(({ message }) => void warnings.push([message].flat().join(" ")))])
  const sized = Effect.runSync(
    sizeSwap({
      copm,
      usdc: c.usdc,
      needed: c.needed,
      midRate: c.midRate,
      taker,
      recipient: taker,
      slippageBps: c.slippageBps
    }).pipe(
      Effect.provideService(SwapRouter, SwapRouter.of({ ...mockRouter(routeOf(c)), leastSellAmount })),
      Effect.provide(capture)
    )
  )
  return { ...sized, warnings }
}

describe("the COPm a COPm-funded payout sells (mock route)", () => {
  it("is the least whose route's minAmountOut covers X: it covers X, one base unit less does not", () => {
    fc.assert(
      fc.property(caseArb, (c) => {
        const { quote, sellAmount } = sized(c)
        expect(quote.minBuyAmount).toBe(minOutFor(c, sellAmount))
        expect(minOutFor(c, sellAmount)).toBeGreaterThanOrEqual(c.needed)
        expect(minOutFor(c, sellAmount - 1n)).toBeLessThan(c.needed)
      }),
      { numRuns: 2000 }
    )
  })

  it("the mock route's inverse, either way: its least sellAmount buys the minBuyAmount asked, one base unit less does not", () => {
    fc.assert(
      fc.property(caseArb, fc.boolean(), fc.bigInt({ min: 1n, max: 10n ** 27n }), (c, fromCopm, minBuyAmount) => {
        const [sellToken, buyToken] = fromCopm ? [copm, c.usdc] : [c.usdc, copm]
        const request = { sellToken, buyToken, taker, recipient: taker, slippageBps: c.slippageBps }
        const least = Option.getOrThrow(
          Effect.runSync(mockRouter(routeOf(c)).leastSellAmount({ ...request, minBuyAmount }))
        )
        const minOut = (sellAmount: bigint) => mockRouteQuote(routeOf(c), { ...request, sellAmount }).minBuyAmount
        expect(minOut(least)).toBeGreaterThanOrEqual(minBuyAmount)
        expect(minOut(least - 1n)).toBeLessThan(minBuyAmount)
      }),
      { numRuns: 2000 }
    )
  })

  it("a route that cannot name the least (a live aggregator), or names a wrong one: the first of a few asks that covers X", () => {
    fc.assert(
      fc.property(caseArb, fc.constantFrom("none", "short", "over"), (c, answer) => {
        const least = sized(c).sellAmount
        const named = answer === "none" ? Option.none() : Option.some(answer === "short" ? least - 1n : least + 1n)
        const { sellAmount, warnings } = sizedWithout(c, () => Effect.succeed(named))
        expect(minOutFor(c, sellAmount)).toBeGreaterThanOrEqual(c.needed)
        expect(sellAmount).toBeGreaterThanOrEqual(least)
        expect(warnings.length).toBe(answer === "none" ? 0 : 1)
      }),
      { numRuns: 300 }
    )
  })
})
