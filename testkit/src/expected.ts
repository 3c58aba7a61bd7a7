/**
 * What the amounts of a payout must be, derived from what the deployment itself shows (R-MONEY-1,
 * README#money): with D = destinationCop, S = sellRateUsdCop and the token's decimals d,
 *   X = D / (0.995 S) rounded up to d,  bridge = 0.5% X up,  F = copby = 1% X up,  T = X + F,
 *   E = D / T rounded down to 6,  display = "1 USD = <E down to 2> COP".
 */
import { add, type Decimal, decimal, divide, format, multiply, round, subtract } from "./money.ts"

const PROVIDER_NET_SHARE = decimal("0.995")
const PROVIDER_FEE_RATE = decimal("0.005")
const SERVICE_FEE_RATE = decimal("0.01")
const ONE_PLUS_SERVICE_FEE = decimal("1.01")

export const EFFECTIVE_RATE_DECIMALS = 6

export interface ExpectedAmounts {
  /** X: provider deposit, `deposit.amount`. */
  readonly deposit: Decimal
  /** `bridge` leg: provider developer fee. */
  readonly providerFee: Decimal
  /** F: `copby` leg, the `feeTransaction` amount. */
  readonly serviceFee: Decimal
  /** T = X + F: `sourceAmount`, `receipt.totalPaid.amount`. */
  readonly totalPaid: Decimal
  /** E */
  readonly effectiveUsdCop: Decimal
  readonly display: string
}

export const displayFor = (effectiveUsdCop: Decimal): string =>
  `1 USD = ${format(round(effectiveUsdCop, 2, "floor"), 2)} COP`

export const serviceFeeOf = (deposit: Decimal, decimals: number): Decimal =>
  round(multiply(deposit, SERVICE_FEE_RATE), decimals, "ceil")

/** Amounts for a deposit X (given, or the minimal one for D at S). */
export const expectedAmounts = (input: {
  readonly destinationCop: Decimal
  readonly sellRate: Decimal
  readonly decimals: number
  readonly deposit?: Decimal
}): ExpectedAmounts => {
  const { decimals, destinationCop, sellRate } = input
  const deposit = input.deposit ?? minimalDeposit(destinationCop, sellRate, decimals)
  const serviceFee = serviceFeeOf(deposit, decimals)
  const totalPaid = add(deposit, serviceFee)
  const effectiveUsdCop = divide(destinationCop, totalPaid, EFFECTIVE_RATE_DECIMALS, "floor")
  return {
    deposit,
    providerFee: round(multiply(deposit, PROVIDER_FEE_RATE), decimals, "ceil"),
    serviceFee,
    totalPaid,
    effectiveUsdCop,
    display: displayFor(effectiveUsdCop)
  }
}

/** The smallest X at `decimals` with X × 0.995 × S ≥ D. */
export const minimalDeposit = (destinationCop: Decimal, sellRate: Decimal, decimals: number): Decimal =>
  divide(destinationCop, multiply(PROVIDER_NET_SHARE, sellRate), decimals, "ceil")

/** A quote without an amount: E = S × 0.995 / 1.01 rounded down to 6 decimals. */
export const expectedRateOnly = (
  sellRate: Decimal
): { readonly effectiveUsdCop: Decimal; readonly display: string } => {
  const effectiveUsdCop = divide(
    multiply(sellRate, PROVIDER_NET_SHARE),
    ONE_PLUS_SERVICE_FEE,
    EFFECTIVE_RATE_DECIMALS,
    "floor"
  )
  return { effectiveUsdCop, display: displayFor(effectiveUsdCop) }
}

/**
 * Whole COP amounts around the provider minimum (X = 2 USD): `enough` is the least D with
 * D / (0.995 S) ≥ 2, `below` the one under it.
 */
export const providerMinimumBoundary = (sellRate: Decimal): { readonly below: Decimal; readonly enough: Decimal } => {
  const enough = round(multiply(multiply(decimal("2"), PROVIDER_NET_SHARE), sellRate), 0, "ceil")
  return { below: subtract(enough, decimal("1")), enough }
}
