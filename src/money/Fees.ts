/**
 * USD→COP payout amounts.
 *
 * The user pays T = X + F in a USD token; X goes to the provider, which takes
 * its developer fee and pays D COP at the sell rate S. All token amounts are
 * rounded at the token's decimals, in the direction that never short-changes
 * the recipient or the service.
 */
import { BigDecimal } from "effect"
import { divideRounded, formatFixed, roundDown, roundHalfUp, roundUp } from "./Decimal.ts"

/** Our service fee, a fraction of the provider deposit X (1%). */
export const SERVICE_FEE_RATE: BigDecimal.BigDecimal = BigDecimal.make(1n, 2)
/** Provider developer fee, a fraction of the provider deposit X (0.5%). */
export const PROVIDER_DEVELOPER_FEE_RATE: BigDecimal.BigDecimal = BigDecimal.make(5n, 3)
export const MINIMUM_PAYOUT_COP: BigDecimal.BigDecimal = BigDecimal.fromBigInt(4000n)
/** Minimum provider deposit X, in USD. */
export const MINIMUM_PROVIDER_DEPOSIT_USD: BigDecimal.BigDecimal = BigDecimal.fromBigInt(2n)

export const DESTINATION_COP_DECIMALS = 2
export const EFFECTIVE_RATE_DECIMALS = 6
export const DISPLAY_RATE_DECIMALS = 2
export const COMMISSION_DISPLAY_DECIMALS = 2

const ZERO = BigDecimal.fromBigInt(0n)
const ONE = BigDecimal.fromBigInt(1n)
/** Share of X that the provider converts after its developer fee: 0.995. */
const PROVIDER_NET_SHARE = BigDecimal.subtract(ONE, PROVIDER_DEVELOPER_FEE_RATE)

export type BelowMinimum = "destination" | "provider"

export interface PayoutInput {
  /** D: COP the recipient must receive; > 0, at most 2 decimals. */
  readonly destinationCop: BigDecimal.BigDecimal
  /** S: provider sell rate, COP per USD; > 0. */
  readonly sellRate: BigDecimal.BigDecimal
  /** M: mid-market rate, COP per USD; > 0. */
  readonly midRate: BigDecimal.BigDecimal
  /** Fraction digits of the USD token, e.g. 6 for USDC. */
  readonly tokenDecimals: number
  /** Live mode only: X is multiplied by (1 + rateBuffer) before rounding up. Fraction ≥ 0, default 0. */
  readonly rateBuffer?: BigDecimal.BigDecimal
}

export interface PayoutAmounts {
  readonly tokenDecimals: number
  /** X: sent to the provider. */
  readonly deposit: BigDecimal.BigDecimal
  /** Provider developer fee leg ("bridge"). */
  readonly providerFee: BigDecimal.BigDecimal
  /** Provider FX spread leg ("bridge_fx") versus the mid-market rate; never negative. */
  readonly providerFx: BigDecimal.BigDecimal
  /** F: our service fee. */
  readonly serviceFee: BigDecimal.BigDecimal
  /** T = X + F: what the user pays. */
  readonly totalPaid: BigDecimal.BigDecimal
  /** E = D / T rounded down to 6 decimals. */
  readonly effectiveUsdCop: BigDecimal.BigDecimal
  /** "1 USD = <E rounded down to 2 decimals> COP" */
  readonly display: string
  /** providerFee + providerFx + serviceFee, exact. */
  readonly commissionUsd: BigDecimal.BigDecimal
  /** commissionUsd rounded half-up to 2 decimals. */
  readonly commissionDisplayAmount: string
  readonly belowMinimum: BelowMinimum | undefined
}

/** PayoutAmounts as wire strings: token amounts with exactly tokenDecimals fraction digits. */
export interface PayoutAmountsWire {
  readonly deposit: string
  readonly providerFee: string
  readonly providerFx: string
  readonly serviceFee: string
  readonly totalPaid: string
  readonly commissionUsd: string
  /** exactly 6 fraction digits */
  readonly effectiveUsdCop: string
  readonly display: string
  readonly commissionDisplayAmount: string
  readonly belowMinimum: BelowMinimum | undefined
}

const requirePositive = (value: BigDecimal.BigDecimal, name: string): void => {
  if (!BigDecimal.isPositive(value)) {
    throw new RangeError(`${name} must be > 0, got ${BigDecimal.format(value)}`)
  }
}

const requireTokenDecimals = (decimals: number): void => {
  if (!Number.isSafeInteger(decimals) || decimals < 0) {
    throw new RangeError(`tokenDecimals must be a non-negative integer, got ${decimals}`)
  }
}

export const displayRate = (effectiveUsdCop: BigDecimal.BigDecimal): string =>
  `1 USD = ${formatFixed(roundDown(effectiveUsdCop, DISPLAY_RATE_DECIMALS), DISPLAY_RATE_DECIMALS)} COP`

/**
 * Computes every amount of a payout of D COP. Inputs are expected to be
 * validated by the caller; violations (non-positive amounts or rates, D with
 * more than 2 decimals, negative buffer) throw a RangeError.
 */
export const computePayout = (input: PayoutInput): PayoutAmounts => {
  const { destinationCop: D, sellRate: S, midRate: M, tokenDecimals: decimals } = input
  const buffer = input.rateBuffer ?? ZERO
  requirePositive(D, "destinationCop")
  requirePositive(S, "sellRate")
  requirePositive(M, "midRate")
  requireTokenDecimals(decimals)
  if (BigDecimal.normalize(D).scale > DESTINATION_COP_DECIMALS) {
    throw new RangeError(`destinationCop has more than ${DESTINATION_COP_DECIMALS} decimals`)
  }
  if (BigDecimal.isNegative(buffer)) {
    throw new RangeError(`rateBuffer must be >= 0, got ${BigDecimal.format(buffer)}`)
  }

  // X = D (1 + buffer) / (0.995 S), rounded once so the recipient gets at least D.
  const deposit = divideRounded(
    BigDecimal.multiply(D, BigDecimal.sum(ONE, buffer)),
    BigDecimal.multiply(PROVIDER_NET_SHARE, S),
    decimals,
    "up"
  )
  const providerFee = roundUp(BigDecimal.multiply(deposit, PROVIDER_DEVELOPER_FEE_RATE), decimals)
  // (X − fee) × (1 − S/M) = (X − fee) × (M − S) / M, rounded once.
  const providerFx = BigDecimal.isGreaterThanOrEqualTo(S, M)
    ? BigDecimal.make(0n, decimals)
    : divideRounded(
      BigDecimal.multiply(BigDecimal.subtract(deposit, providerFee), BigDecimal.subtract(M, S)),
      M,
      decimals,
      "halfUp"
    )
  const serviceFee = roundUp(BigDecimal.multiply(deposit, SERVICE_FEE_RATE), decimals)
  const totalPaid = BigDecimal.sum(deposit, serviceFee)
  const effectiveUsdCop = divideRounded(D, totalPaid, EFFECTIVE_RATE_DECIMALS, "down")
  const commissionUsd = BigDecimal.sumAll([providerFee, providerFx, serviceFee])

  const belowMinimum: BelowMinimum | undefined = BigDecimal.isLessThan(D, MINIMUM_PAYOUT_COP)
    ? "destination"
    : BigDecimal.isLessThan(deposit, MINIMUM_PROVIDER_DEPOSIT_USD)
    ? "provider"
    : undefined

  return {
    tokenDecimals: decimals,
    deposit,
    providerFee,
    providerFx,
    serviceFee,
    totalPaid,
    effectiveUsdCop,
    display: displayRate(effectiveUsdCop),
    commissionUsd,
    commissionDisplayAmount: formatFixed(
      roundHalfUp(commissionUsd, COMMISSION_DISPLAY_DECIMALS),
      COMMISSION_DISPLAY_DECIMALS
    ),
    belowMinimum
  }
}

export const formatEffectiveRate = (effectiveUsdCop: BigDecimal.BigDecimal): string =>
  formatFixed(effectiveUsdCop, EFFECTIVE_RATE_DECIMALS)

export const formatPayoutAmounts = (amounts: PayoutAmounts): PayoutAmountsWire => {
  const token = (x: BigDecimal.BigDecimal) => formatFixed(x, amounts.tokenDecimals)
  return {
    deposit: token(amounts.deposit),
    providerFee: token(amounts.providerFee),
    providerFx: token(amounts.providerFx),
    serviceFee: token(amounts.serviceFee),
    totalPaid: token(amounts.totalPaid),
    commissionUsd: token(amounts.commissionUsd),
    effectiveUsdCop: formatEffectiveRate(amounts.effectiveUsdCop),
    display: amounts.display,
    commissionDisplayAmount: amounts.commissionDisplayAmount,
    belowMinimum: amounts.belowMinimum
  }
}

export interface RateQuote {
  /** E = S × 0.995 / 1.01 rounded down to 6 decimals: the rate any amount gets, before token rounding. */
  readonly effectiveUsdCop: BigDecimal.BigDecimal
  readonly display: string
}

/** The effective rate shown before the user enters an amount. */
export const quoteWithoutAmount = (sellRate: BigDecimal.BigDecimal): RateQuote => {
  requirePositive(sellRate, "sellRate")
  const effectiveUsdCop = divideRounded(
    BigDecimal.multiply(sellRate, PROVIDER_NET_SHARE),
    BigDecimal.sum(ONE, SERVICE_FEE_RATE),
    EFFECTIVE_RATE_DECIMALS,
    "down"
  )
  return { effectiveUsdCop, display: displayRate(effectiveUsdCop) }
}
