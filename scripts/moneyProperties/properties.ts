/**
 * The money rules as properties, defined once: test/money/Fees.property.test.ts runs each over 1,000 generated cases,
 * `npm run money:check` over a million (scripts/money-check.ts). A case is a payout of D COP at provider rates S and M,
 * from USDC or COPm; the subject is the service's own pricing (Pricing.pricePayout, the path GET quote and payout
 * creation share, then Funding.fundPayout for the transactions; COPm through the mock route's pricing,
 * SwapRouterMock.mockRouter, at the case's M and route fee); the reference is reference.ts (exact rationals).
 * No vitest import here: a property answers a violation message, or undefined when the case keeps the rule.
 */
import type { FeeLeg, PreparedTx } from "@cop-integrations/contracts"
import { BigDecimal, Effect, Result } from "effect"
import * as fc from "fast-check"
import { decodeFunctionData, erc20Abi, getAddress } from "viem"
import type { TokenInfo } from "../../src/chain/Tokens.ts"
import { formatEffectiveRate, quoteWithoutAmount } from "../../src/money/index.ts"
import { fundPayout, type PayoutTransactions } from "../../src/payouts/Funding.ts"
import { type PayoutPrice, pricePayout } from "../../src/pricing/Pricing.ts"
import { routerAbi } from "../../src/router/RouterAbi.ts"
import { SwapRouter } from "../../src/router/SwapRouter.ts"
import { mockRouter } from "../../src/router/SwapRouterMock.ts"
import { add, compare, mul, pow10, rational, scaled, unitsOfWire, wireOfUnits } from "./rational.ts"
import {
  COPM_DECIMALS,
  leastCoveringSell,
  type MoneyCase,
  quotedSell,
  referenceCopm,
  referenceRate,
  referenceRateOnlyMicros,
  referenceUsd,
  routeMinOut,
  usdLegs
} from "./reference.ts"

export type { MoneyCase } from "./reference.ts"

const MAX_DESTINATION_CENTS = 1_155_200_000n // the Bre-B cap, 11,552,000.00 COP
const ADDRESSES = {
  usdc: getAddress("0xcebA9300f2b948710d2653dD7B07f33A8B32118C"),
  copm: getAddress("0x8A567e2aE79CA692Bd748aB832081C45de4041eA"),
  router: getAddress("0x5555555555555555555555555555555555555555"),
  feeWallet: getAddress("0x1111111111111111111111111111111111111111"),
  deposit: getAddress("0x2222222222222222222222222222222222222222"),
  user: getAddress("0x3333333333333333333333333333333333333333")
}

// ---------------------------------------------------------------------------------------------- cases

/** A rate in [min, max] COP per USD with 0 to 6 fraction digits. */
const rateArb = (min: bigint, max: bigint) =>
  fc.integer({ min: 0, max: 6 }).chain((scale) =>
    fc.bigInt({ min: min * pow10(scale), max: max * pow10(scale) }).map((units) => ({ units, scale }))
  )

/**
 * Real ranges: M from 1,000 to 10,000 COP per USD; S below M by up to 5 % (a provider's spread) or above it by up to
 * 1 %; D from one cent to the Bre-B cap, spread over magnitudes (a tenth up to 20,000 COP, around both minimums,
 * the rest from 8,000 COP); the live rate buffer 0 half of the time, else up to 100 bps; a route fee of 0 to 100 bps;
 * the USD token at 6 decimals, sometimes 18; half the COPm payouts created with a firm quote (MoneyCase.quoted), most
 * of whose swap still covers X.
 */
export const moneyCaseArb: fc.Arbitrary<MoneyCase> = fc
  .record({
    fromToken: fc.constantFrom("USDC" as const, "COPm" as const),
    usdDecimals: fc.constantFrom(6, 6, 6, 18),
    destinationCents: fc.oneof(
      { arbitrary: fc.bigInt({ min: 1n, max: 2_000_000n }), weight: 1 },
      { arbitrary: fc.bigInt({ min: 800_000n, max: 100_000_000n }), weight: 4 },
      { arbitrary: fc.bigInt({ min: 800_000n, max: MAX_DESTINATION_CENTS }), weight: 5 }
    ),
    mid: rateArb(1_000n, 10_000n),
    spreadBps: fc.integer({ min: -100, max: 500 }),
    sellScale: fc.integer({ min: 0, max: 6 }),
    rateBufferBps: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 100 })),
    routeFeeBps: fc.integer({ min: 0, max: 100 }),
    quoted: fc.oneof(
      { arbitrary: fc.constant(undefined), weight: 4 },
      {
        arbitrary: fc.record({
          _tag: fc.constant("Covers" as const),
          extraMicros: fc.bigInt({ min: 0n, max: 200n }),
          fractionNanos: fc.oneof(
            fc.bigInt({ min: 0n, max: 999_999_999n }),
            fc.bigInt({ min: 499_999_000n, max: 500_000_999n })
          )
        }),
        weight: 3
      },
      {
        arbitrary: fc.record({ _tag: fc.constant("Short" as const), shortBy: fc.bigInt({ min: 0n, max: 10n ** 18n }) }),
        weight: 1
      }
    )
  })
  .map(({ fromToken, mid, quoted, sellScale, spreadBps, ...rest }) => ({
    ...rest,
    fromToken,
    quoted: fromToken === "COPm" ? quoted : undefined,
    mid,
    // S = M × (1 − spread), cut to sellScale digits
    sell: {
      units: (mid.units * BigInt(10_000 - spreadBps) * pow10(sellScale)) / (pow10(mid.scale) * 10_000n),
      scale: sellScale
    }
  }))

// ---------------------------------------------------------------------------------------------- the service's answer

type Outcome =
  | { readonly _tag: "Priced"; readonly price: PayoutPrice; readonly funding: PayoutTransactions }
  | { readonly _tag: "Refused"; readonly error: { readonly _tag: string; readonly error?: string } }

export interface Evaluated {
  readonly c: MoneyCase
  readonly outcome: Outcome
  readonly rateOnly: { readonly effectiveUsdCop: string; readonly display: string }
  readonly usd: ReturnType<typeof referenceUsd>
  /** The firm quote's swap sellAmount the payout is created with, if any. */
  readonly quotedSwapSellAmount: bigint | undefined
}

const tokensOf = (c: MoneyCase): { readonly usdc: TokenInfo; readonly copm: TokenInfo } => ({
  usdc: { symbol: "USDC", chain: "celo", address: ADDRESSES.usdc, decimals: c.usdDecimals },
  copm: { symbol: "COPm", chain: "celo", address: ADDRESSES.copm, decimals: COPM_DECIMALS }
})

const decimalOf = (rate: { readonly units: bigint; readonly scale: number }) => BigDecimal.make(rate.units, rate.scale)

/** The service prices the case as GET quote and payout creation do, then builds the transactions. */
const priceWithService = (c: MoneyCase, quotedSwapSellAmount: bigint | undefined): Outcome => {
  const { copm, usdc } = tokensOf(c)
  const midRate = decimalOf(c.mid)
  const route = { midRate, feeBps: c.routeFeeBps, router: ADDRESSES.router }
  const program = Effect.gen(function*() {
    const price = yield* pricePayout({
      destinationCop: BigDecimal.make(c.destinationCents, 2),
      rates: { sellRate: decimalOf(c.sell), midRate },
      fromToken: c.fromToken === "COPm" ? copm : usdc,
      usdc,
      feeWallet: ADDRESSES.feeWallet,
      rateBufferBps: c.rateBufferBps,
      swapTaker: ADDRESSES.user,
      quotedSwapSellAmount
    })
    const funding = yield* fundPayout({
      price,
      fromToken: c.fromToken === "COPm" ? copm : usdc,
      usdc,
      user: ADDRESSES.user,
      depositAddress: ADDRESSES.deposit,
      feeWallet: ADDRESSES.feeWallet
    })
    return { price, funding }
  }).pipe(
    Effect.provideService(SwapRouter, mockRouter(route))
  )
  return Result.match(Effect.runSync(Effect.result(program)), {
    onFailure: (error) => ({ _tag: "Refused", error }),
    onSuccess: ({ funding, price }) => ({ _tag: "Priced", price, funding })
  })
}

export const evaluate = (c: MoneyCase): Evaluated => {
  const quote = quoteWithoutAmount(decimalOf(c.sell))
  const usd = referenceUsd(c)
  const quotedSwapSellAmount = quotedSell(c, usd.deposit)
  return {
    c,
    outcome: priceWithService(c, quotedSwapSellAmount),
    rateOnly: { effectiveUsdCop: formatEffectiveRate(quote.effectiveUsdCop), display: quote.display },
    usd,
    quotedSwapSellAmount
  }
}

// ---------------------------------------------------------------------------------------------- reading the answer

/** A wire amount's units, or a violation naming the field when it does not carry exactly `scale` digits. */
const units = (field: string, wire: string | undefined, scale: number): bigint => {
  const parsed = wire === undefined ? undefined : unitsOfWire(wire, scale)
  if (parsed === undefined) {
    throw new Violation(`${field} ${JSON.stringify(wire)} is not a plain decimal with ${scale} digits`)
  }
  return parsed
}

class Violation extends Error {}

const legUnits = (fees: ReadonlyArray<FeeLeg>, code: FeeLeg["code"], scale: number) =>
  units(`fees.${code}`, fees.find((leg) => leg.code === code)?.amountUsd, scale)

const erc20TransferOf = (tx: PreparedTx) => {
  const call = decodeFunctionData({ abi: erc20Abi, data: tx.data as `0x${string}` })
  if (call.functionName !== "transfer") throw new Violation(`${call.functionName} instead of transfer`)
  const [to, amount] = call.args
  return { token: getAddress(tx.to), to: getAddress(to), amount }
}

const swapOf = (tx: PreparedTx) => {
  const call = decodeFunctionData({ abi: routerAbi, data: tx.data as `0x${string}` })
  const [tokenIn, tokenOut, amountIn, minAmountOut, recipient] = call.args
  return {
    router: getAddress(tx.to),
    tokenIn: getAddress(tokenIn),
    tokenOut: getAddress(tokenOut),
    amountIn,
    minAmountOut,
    recipient: getAddress(recipient)
  }
}

const differ = (what: string, actual: unknown, expected: unknown) =>
  actual === expected ? undefined : `${what}: ${String(actual)}, expected ${String(expected)}`

const first = (...checks: ReadonlyArray<string | undefined>) => checks.find((check) => check !== undefined)

/** What the reference says the user pays in USD, E and the commission, given the service's chosen swap (COPm). */
const referenceTotals = (e: Evaluated, funding: PayoutTransactions) => {
  const { c, usd } = e
  if (c.fromToken === "USDC") {
    const totalPaid = scaled(usd.totalPaid, c.usdDecimals)
    return {
      totalPaidScale: c.usdDecimals,
      totalPaidUnits: usd.totalPaid,
      copm: undefined,
      ...referenceRate(c, totalPaid, usdLegs(c, usd))
    }
  }
  const copm = referenceCopm(c, usd, swapOf(funding.transaction).amountIn)
  return { ...copm, copm, ...referenceRate(c, copm.totalPaid, add(usdLegs(c, usd), scaled(copm.swapLeg, 6))) }
}

// ---------------------------------------------------------------------------------------------- the properties

export interface MoneyProperty {
  readonly name: string
  /** The rule, as DESIGN §3 states it. */
  readonly rule: string
  readonly check: (e: Evaluated) => string | undefined
}

/** A property of a priced payout: cases under a minimum are the `minimums` property's. */
const priced = (
  name: string,
  rule: string,
  check: (e: Evaluated, price: PayoutPrice, funding: PayoutTransactions) => string | undefined
): MoneyProperty => ({
  name,
  rule,
  check: (e) => {
    if (e.outcome._tag === "Refused") return undefined
    try {
      return check(e, e.outcome.price, e.outcome.funding)
    } catch (error) {
      if (error instanceof Violation) return error.message
      throw error
    }
  }
})

export const MONEY_PROPERTIES: ReadonlyArray<MoneyProperty> = [
  {
    name: "minimums",
    rule:
      "below_minimum exactly when D < 4000 COP or X < 2 USD; every other case is priced, but a firm quote's short swap",
    check: ({ c, outcome, usd }) => {
      if (usd.belowMinimum !== undefined) {
        return outcome._tag === "Refused" && outcome.error._tag === "BelowMinimum"
          ? undefined
          : `expected below_minimum (${usd.belowMinimum}), got ${
            outcome._tag === "Refused" ? outcome.error._tag : "a price"
          }`
      }
      if (c.quoted?._tag === "Short") return undefined
      return outcome._tag === "Priced" ? undefined : `refused: ${outcome.error._tag} ${outcome.error.error ?? ""}`
    }
  },
  {
    name: "firm quote",
    rule: "a firm COPm quote's sellAmount is charged as quoted while the route delivers X for it, else requote",
    check: ({ c, outcome, quotedSwapSellAmount, usd }) => {
      if (c.quoted === undefined || usd.belowMinimum !== undefined) return undefined
      if (c.quoted._tag === "Short") {
        return outcome._tag === "Refused" && outcome.error._tag === "Requote"
          ? undefined
          : `a quoted swap short of X: expected requote, got ${
            outcome._tag === "Refused" ? outcome.error._tag : "a price"
          }`
      }
      if (outcome._tag === "Refused") return `refused: ${outcome.error._tag} ${outcome.error.error ?? ""}`
      return differ("sellAmount", swapOf(outcome.funding.transaction).amountIn, quotedSwapSellAmount)
    }
  },
  priced(
    "delivers",
    "X = D (1 + buffer) / (0.995 S) rounded up: at the sell rate the provider delivers at least D, and one unit less would not",
    (e, price) => {
      const x = units("deposit.amount", price.usd.wire.deposit, e.c.usdDecimals)
      const owed = mul(scaled(e.c.destinationCents, 2), rational(10_000n + BigInt(e.c.rateBufferBps), 10_000n))
      const delivered = (depositUnits: bigint) =>
        mul(mul(scaled(depositUnits, e.c.usdDecimals), rational(995n, 1000n)), scaled(e.c.sell.units, e.c.sell.scale))
      return first(
        compare(delivered(x), owed) < 0 ? `X ${price.usd.wire.deposit} delivers less than D at S` : undefined,
        compare(delivered(x - 1n), owed) >= 0
          ? `X ${price.usd.wire.deposit} is not the least amount that delivers D`
          : undefined,
        differ("X units", x, e.usd.deposit)
      )
    }
  ),
  priced(
    "fee legs",
    "bridge = ceil(0.5 % X), bridge_fx = half-up((X − bridge)(1 − S/M)) (0 when S ≥ M), copby F = ceil(1 % X) to the fee wallet; a swap leg first for COPm; all quoted",
    (e, price) => {
      const codes = price.fees.map((leg) => leg.code).join(",")
      const expectedCodes = e.c.fromToken === "COPm" ? "swap,bridge_fx,bridge,copby" : "bridge_fx,bridge,copby"
      const copby = price.fees.find((leg) => leg.code === "copby")
      return first(
        differ("fee legs", codes, expectedCodes),
        price.fees.every((leg) => leg.status === "quoted") ? undefined : "a leg not quoted",
        differ("copby to", copby?.to, ADDRESSES.feeWallet),
        differ("bridge", legUnits(price.fees, "bridge", e.c.usdDecimals), e.usd.bridge),
        differ("bridge_fx", legUnits(price.fees, "bridge_fx", e.c.usdDecimals), e.usd.bridgeFx),
        differ("copby F", legUnits(price.fees, "copby", e.c.usdDecimals), e.usd.serviceFee)
      )
    }
  ),
  priced(
    "totals",
    "T = X + F = sourceAmount = totalPaid (USDC); from COPm totalPaid = X + F + swap leg and sourceAmount = sellAmount + F × M in COPm",
    (e, price, funding) => {
      const ref = referenceTotals(e, funding)
      const totalPaid = units("totalPaid", price.totalPaidUsd, ref.totalPaidScale)
      if (ref.copm === undefined) {
        return first(
          differ("T", totalPaid, e.usd.totalPaid),
          differ("sourceAmount", units("sourceAmount", price.sourceAmount, e.c.usdDecimals), e.usd.totalPaid)
        )
      }
      return first(
        differ("totalPaid (USD)", totalPaid, ref.totalPaidUnits),
        differ("sourceAmount (COPm)", units("sourceAmount", price.sourceAmount, COPM_DECIMALS), ref.copm.sourceAmount)
      )
    }
  ),
  priced(
    "effective rate",
    "E = D / totalPaid rounded down to 6 decimals, never above the rate-only E = S × 0.995 / 1.01",
    (e, price, funding) => {
      const ref = referenceTotals(e, funding)
      const effective = units("effectiveUsdCop", price.effectiveUsdCop, 6)
      return first(
        differ("E (micro-COP)", effective, ref.effectiveMicros),
        effective > referenceRateOnlyMicros(e.c) ? `E ${price.effectiveUsdCop} beats the rate-only quote` : undefined
      )
    }
  ),
  priced(
    "display",
    "display = `1 USD = <E rounded down to 2 decimals> COP`",
    (e, price, funding) =>
      differ("display", price.display, `1 USD = ${wireOfUnits(referenceTotals(e, funding).displayCents, 2)} COP`)
  ),
  priced(
    "commission",
    "commission displayAmount = the sum of the legs, half-up to 2 decimals",
    (e, price, funding) =>
      differ(
        "commission (cents)",
        units("commission", price.commissionDisplayAmount, 2),
        referenceTotals(e, funding).commissionCents
      )
  ),
  priced(
    "calldata",
    "the transactions move the JSON amounts: USDC transfer(X) to the deposit and transfer(F) to the fee wallet; COPm swap(sellAmount) paying the deposit and transfer(fee) in COPm, sellAmount + fee = sourceAmount",
    (e, price, funding) => {
      const x = units("deposit.amount", price.usd.wire.deposit, e.c.usdDecimals)
      const f = legUnits(price.fees, "copby", e.c.usdDecimals)
      const fee = erc20TransferOf(funding.feeTransaction)
      if (e.c.fromToken === "USDC") {
        const deposit = erc20TransferOf(funding.transaction)
        return first(
          differ(
            "deposit transfer",
            `${deposit.token} ${deposit.to} ${deposit.amount}`,
            `${ADDRESSES.usdc} ${ADDRESSES.deposit} ${x}`
          ),
          differ(
            "fee transfer",
            `${fee.token} ${fee.to} ${fee.amount}`,
            `${ADDRESSES.usdc} ${ADDRESSES.feeWallet} ${f}`
          )
        )
      }
      const swap = swapOf(funding.transaction)
      return first(
        differ(
          "swap",
          `${swap.router} ${swap.tokenIn} → ${swap.tokenOut} to ${swap.recipient}`,
          `${ADDRESSES.router} ${ADDRESSES.copm} → ${ADDRESSES.usdc} to ${ADDRESSES.deposit}`
        ),
        differ("approvalTarget", funding.transaction.approvalTarget, ADDRESSES.router),
        differ("fee transfer", `${fee.token} ${fee.to}`, `${ADDRESSES.copm} ${ADDRESSES.feeWallet}`),
        differ("fee in COPm", wireOfUnits(fee.amount, COPM_DECIMALS), price.copm?.serviceFee),
        differ("sellAmount + fee", swap.amountIn + fee.amount, units("sourceAmount", price.sourceAmount, COPM_DECIMALS))
      )
    }
  ),
  priced(
    "COPm swap",
    "from COPm: the swap's min-out (the route's own for sellAmount) ≥ X, sellAmount (unless quoted) the least that covers X (one base unit less would not); fee = F × M rounded up; swap leg = half-up(sellAmount / M − X) ≥ 0",
    (e, price, funding) => {
      if (e.c.fromToken !== "COPm") return undefined
      const ref = referenceTotals(e, funding)
      const swap = swapOf(funding.transaction)
      const x = units("deposit.amount", price.usd.wire.deposit, e.c.usdDecimals)
      const least = leastCoveringSell(e.c, x)
      return first(
        differ("min-out", swap.minAmountOut, routeMinOut(e.c, swap.amountIn)),
        swap.minAmountOut >= x ? undefined : `min-out ${swap.minAmountOut} < X ${x}`,
        e.c.quoted !== undefined || routeMinOut(e.c, swap.amountIn - 1n) < x
          ? undefined
          : `sellAmount ${swap.amountIn} is not the least covering X: ${swap.amountIn - 1n} covers it too`,
        e.c.quoted !== undefined ? undefined : differ("sellAmount (the least covering X)", swap.amountIn, least),
        differ("fee in COPm (units)", erc20TransferOf(funding.feeTransaction).amount, ref.copm?.feeCopm),
        differ("swap leg", legUnits(price.fees, "swap", 6), ref.copm?.swapLeg)
      )
    }
  ),
  {
    name: "rate-only quote",
    rule: "a quote without an amount: E = S × 0.995 / 1.01 rounded down to 6 decimals, display to 2",
    check: ({ c, rateOnly }) => {
      const expected = referenceRateOnlyMicros(c)
      return first(
        differ("rate-only E", rateOnly.effectiveUsdCop, wireOfUnits(expected, 6)),
        differ("rate-only display", rateOnly.display, `1 USD = ${wireOfUnits(expected / 10_000n, 2)} COP`)
      )
    }
  }
]

/** Every property's violation for one case (empty when it keeps them all). */
export const violations = (e: Evaluated): ReadonlyArray<{ readonly property: string; readonly message: string }> =>
  MONEY_PROPERTIES.flatMap((property) => {
    const message = property.check(e)
    return message === undefined ? [] : [{ property: property.name, message }]
  })

/** A case as JSON (bigints as strings), to reproduce a failure. */
export const showCase = (c: MoneyCase): string =>
  JSON.stringify(c, (_key, value: unknown) => (typeof value === "bigint" ? value.toString() : value))
