/**
 * DESIGN §3's money rules as an exact-rational reference (bigint numerator/denominator, see rational.ts), for one
 * generated case. Amounts come back as integer units of their wire scale. For COPm the reference also models the mock
 * route the case is priced through (SwapRouterMock's documented pricing, re-derived here, not imported).
 */
import {
  add,
  ceilUnits,
  compare,
  div,
  floorUnits,
  halfUpUnits,
  max,
  mul,
  pow10,
  type Rational,
  rational,
  scaled,
  sub
} from "./rational.ts"

export const COPM_DECIMALS = 18
/** A payout's swap slippage (CopmFunding: DEFAULT_SLIPPAGE_BPS). */
export const PAYOUT_SWAP_SLIPPAGE_BPS = 50n
const BPS = 10_000n

/** A decimal given as units × 10^-scale (a rate as the provider would send it). */
export interface Decimal {
  readonly units: bigint
  readonly scale: number
}

export interface MoneyCase {
  readonly fromToken: "USDC" | "COPm"
  /** Decimals of the USD token the provider is paid in (6 for USDC). */
  readonly usdDecimals: number
  /** D in cents. */
  readonly destinationCents: bigint
  /** S, COP per USD. */
  readonly sell: Decimal
  /** M, COP per USD (1 COPm = 1 COP). */
  readonly mid: Decimal
  readonly rateBufferBps: number
  /** The mock route's fee (MOCK_SWAP_FEE_BPS), COPm cases only. */
  readonly routeFeeBps: number
  /**
   * COPm only: the payout is created with a firm quote whose swap sells a given amount (`quotedSell`): one that still
   * covers X, chosen so its swap leg is `extraMicros` micro-USD above the least plus `fractionNanos` × 10^-9 of one
   * (near half a micro-USD, the leg's rounding is tested at its edge), or one that falls short of X by `shortBy`.
   */
  readonly quoted:
    | { readonly _tag: "Covers"; readonly extraMicros: bigint; readonly fractionNanos: bigint }
    | { readonly _tag: "Short"; readonly shortBy: bigint }
    | undefined
}

const ONE = rational(1n)
const rateOf = (decimal: Decimal) => scaled(decimal.units, decimal.scale)
const destinationOf = (c: MoneyCase) => scaled(c.destinationCents, 2)

/** The provider side, the same for USDC and COPm: X, the provider's legs and F, in units of the USD token. */
export const referenceUsd = (c: MoneyCase) => {
  const D = destinationOf(c)
  const S = rateOf(c.sell)
  const M = rateOf(c.mid)
  const decimals = c.usdDecimals
  // X = D × (1 + buffer) / (0.995 × S), up
  const deposit = ceilUnits(
    div(mul(D, add(ONE, rational(BigInt(c.rateBufferBps), BPS))), mul(rational(995n, 1000n), S)),
    decimals
  )
  const X = scaled(deposit, decimals)
  const bridge = ceilUnits(mul(X, rational(5n, 1000n)), decimals)
  // (X − bridge) × (1 − S/M), half-up; never negative (a sell rate at or above mid-market costs no FX)
  const fxExact = mul(sub(X, scaled(bridge, decimals)), sub(ONE, div(S, M)))
  const bridgeFx = compare(fxExact, rational(0n)) <= 0 ? 0n : halfUpUnits(fxExact, decimals)
  const serviceFee = ceilUnits(mul(X, rational(1n, 100n)), decimals)
  const belowMinimum = compare(D, rational(4000n)) < 0
    ? "destination" as const
    : compare(X, rational(2n)) < 0
    ? "provider" as const
    : undefined
  return { deposit, bridge, bridgeFx, serviceFee, totalPaid: deposit + serviceFee, belowMinimum }
}
export type ReferenceUsd = ReturnType<typeof referenceUsd>

/** E = S × 0.995 / 1.01 rounded down to 6 decimals: a quote without an amount. */
export const referenceRateOnlyMicros = (c: MoneyCase): bigint =>
  floorUnits(div(mul(rateOf(c.sell), rational(995n, 1000n)), rational(101n, 100n)), 6)

/**
 * The mock route's least output for `sell` COPm base units: the mid-market value floored to usdDecimals + 6 digits,
 * less the route fee, floored to the USD token's units; then less the slippage, floored.
 */
export const routeMinOut = (c: MoneyCase, sell: bigint): bigint => {
  const fair = floorUnits(div(scaled(sell, COPM_DECIMALS), rateOf(c.mid)), c.usdDecimals + 6)
  const buy = (fair * (BPS - BigInt(c.routeFeeBps))) / (BPS * pow10(6))
  return (buy * (BPS - PAYOUT_SWAP_SLIPPAGE_BPS)) / BPS
}

/** The least COPm (base units) whose route delivers at least `needed`, by inverting each floor of `routeMinOut`. */
export const leastCoveringSell = (c: MoneyCase, needed: bigint): bigint => {
  const buy = (needed * BPS + (BPS - PAYOUT_SWAP_SLIPPAGE_BPS) - 1n) / (BPS - PAYOUT_SWAP_SLIPPAGE_BPS)
  const feeShare = BPS - BigInt(c.routeFeeBps)
  const fair = (buy * BPS * pow10(6) + feeShare - 1n) / feeShare
  return ceilUnits(div(mul(scaled(fair, c.usdDecimals + 6), rateOf(c.mid)), ONE), COPM_DECIMALS)
}

/** What a payout from COPm costs once the swap sells `sell` base units (the service chooses it; the rules price it). */
export const referenceCopm = (c: MoneyCase, usd: ReferenceUsd, sell: bigint) => {
  const M = rateOf(c.mid)
  const decimals = c.usdDecimals
  const X = scaled(usd.deposit, decimals)
  // the fee F in COPm: F × M, up
  const feeCopm = ceilUnits(mul(scaled(usd.serviceFee, decimals), M), COPM_DECIMALS)
  // the swap leg: sellAmount / M − X in USD, half-up to 6 decimals, never below 0
  const swapLeg = halfUpUnits(max(sub(div(scaled(sell, COPM_DECIMALS), M), X), rational(0n)), 6)
  const totalScale = Math.max(decimals, 6)
  const totalPaid = add(scaled(usd.totalPaid, decimals), scaled(swapLeg, 6))
  return {
    feeCopm,
    swapLeg,
    sourceAmount: sell + feeCopm,
    totalPaidScale: totalScale,
    totalPaidUnits: floorUnits(totalPaid, totalScale),
    totalPaid
  }
}

/** E, display and commission for what the user paid in USD (`totalPaid`) and the legs. */
export const referenceRate = (c: MoneyCase, totalPaid: Rational, legsUsd: Rational) => {
  const effectiveMicros = floorUnits(div(destinationOf(c), totalPaid), 6)
  return {
    effectiveMicros,
    displayCents: effectiveMicros / 10_000n,
    commissionCents: halfUpUnits(legsUsd, 2)
  }
}

export const usdLegs = (c: MoneyCase, usd: ReferenceUsd): Rational =>
  scaled(usd.bridge + usd.bridgeFx + usd.serviceFee, c.usdDecimals)

/** The firm quote's sellAmount of a case (see MoneyCase.quoted), for the X the rules give. */
export const quotedSell = (c: MoneyCase, deposit: bigint): bigint | undefined => {
  if (c.quoted === undefined) return undefined
  const least = leastCoveringSell(c, deposit)
  if (c.quoted._tag === "Short") return least - 1n - c.quoted.shortBy > 0n ? least - 1n - c.quoted.shortBy : 1n
  const M = rateOf(c.mid)
  const X = scaled(deposit, c.usdDecimals)
  // the least's swap leg in micro-USD, up; then the leg aimed at: that + extra + fraction
  const legMicros = ceilUnits(sub(div(scaled(least, COPM_DECIMALS), M), X), 6) + c.quoted.extraMicros
  const leg = add(scaled(legMicros, 6), scaled(c.quoted.fractionNanos, 15))
  return ceilUnits(mul(add(X, leg), M), COPM_DECIMALS)
}
