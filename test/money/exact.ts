/**
 * Test-only exact integer helpers, written independently of src/money so the
 * tests do not grade the module with its own arithmetic.
 */
import { BigDecimal } from "effect"
import { expect } from "vitest"

export const pow10 = (exponent: number): bigint => 10n ** BigInt(exponent)

/** ceil(a / b) for a ≥ 0, b > 0 */
export const ceilDiv = (a: bigint, b: bigint): bigint => (a + b - 1n) / b

/** floor(a / b) for a ≥ 0, b > 0 */
export const floorDiv = (a: bigint, b: bigint): bigint => a / b

/** round(a / b) with ties up, for a ≥ 0, b > 0 */
export const halfUpDiv = (a: bigint, b: bigint): bigint => (2n * a + b) / (2n * b)

/** Integer units of a wire string that must have exactly `decimals` fraction digits. */
export const unitsOfFixed = (wire: string, decimals: number): bigint => {
  const pattern = decimals === 0 ? /^([0-9]+)$/ : new RegExp(`^([0-9]+)\\.([0-9]{${decimals}})$`)
  const match = pattern.exec(wire)
  if (match === null) throw new Error(`${JSON.stringify(wire)} is not a fixed decimal with ${decimals} digits`)
  return BigInt(`${match[1]}${match[2] ?? ""}`)
}

/** Renders integer units as a plain string with exactly `decimals` fraction digits (units ≥ 0). */
export const fixedOfUnits = (units: bigint, decimals: number): string => {
  if (decimals === 0) return units.toString()
  const digits = units.toString().padStart(decimals + 1, "0")
  return `${digits.slice(0, -decimals)}.${digits.slice(-decimals)}`
}

export const expectDecimal = (actual: BigDecimal.BigDecimal, expected: string): void => {
  expect(
    BigDecimal.equals(actual, BigDecimal.fromStringUnsafe(expected)),
    `expected ${BigDecimal.format(actual)} to equal ${expected}`
  ).toBe(true)
}

/**
 * Expected payout in integer units, straight from the spec:
 * D in cents, S and M in micro-COP per USD, token amounts in 10^-decimals units.
 */
export const referencePayout = (dCents: bigint, sMicros: bigint, mMicros: bigint, decimals: number) => {
  // X = D / (0.995 S) = (dCents / 100) / ((995 / 1000) (sMicros / 10^6)); in units × 10^decimals
  const deposit = ceilDiv(dCents * pow10(decimals + 7), 995n * sMicros)
  const providerFee = ceilDiv(deposit * 5n, 1000n)
  const providerFx = sMicros >= mMicros ? 0n : halfUpDiv((deposit - providerFee) * (mMicros - sMicros), mMicros)
  const serviceFee = ceilDiv(deposit, 100n)
  const totalPaid = deposit + serviceFee
  // E = D / T in micro-COP: (dCents / 100) × 10^6 / (totalPaid / 10^decimals)
  const effectiveMicros = floorDiv(dCents * pow10(decimals + 4), totalPaid)
  const commission = providerFee + providerFx + serviceFee
  return {
    deposit,
    providerFee,
    providerFx,
    serviceFee,
    totalPaid,
    effectiveMicros,
    displayCents: floorDiv(effectiveMicros, 10_000n),
    commissionCents: halfUpDiv(commission * 100n, pow10(decimals))
  }
}

/** Integer units of a BigDecimal read from effect's own (value, scale) fields; throws if inexact. */
export const unitsOfDecimal = (x: BigDecimal.BigDecimal, decimals: number): bigint => {
  const normalized = BigDecimal.normalize(x)
  if (normalized.scale > decimals) throw new Error(`${BigDecimal.format(x)} has more than ${decimals} digits`)
  return normalized.value * pow10(decimals - normalized.scale)
}
