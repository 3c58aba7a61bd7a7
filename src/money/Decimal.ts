/**
 * Exact decimal helpers over `effect/BigDecimal`.
 *
 * Every operation here is exact bigint arithmetic: a money value never passes
 * through a JavaScript `number`. Only scales (counts of fraction digits) are numbers.
 *
 * Rounding directions are defined on the number line, so they are also correct
 * for negative values:
 * - "up"     = ceiling, toward +∞
 * - "down"   = floor, toward −∞
 * - "halfUp" = to nearest, ties toward +∞
 * For the non-negative amounts this module deals with, these coincide with the
 * usual "away from zero" / "toward zero" / "half away from zero".
 */
import { BigDecimal, Option } from "effect"

export type RoundingMode = "up" | "down" | "halfUp"

const PLAIN_DECIMAL = /^(0|[1-9][0-9]*)(?:\.([0-9]+))?$/

const assertScale = (scale: number, name: string): void => {
  if (!Number.isSafeInteger(scale) || scale < 0) {
    throw new RangeError(`${name} must be a non-negative integer, got ${scale}`)
  }
}

const pow10 = (exponent: number): bigint => 10n ** BigInt(exponent)

const floorDiv = (numerator: bigint, denominator: bigint): bigint => {
  const quotient = numerator / denominator // truncates toward zero
  const inexact = numerator % denominator !== 0n
  return inexact && (numerator < 0n) !== (denominator < 0n) ? quotient - 1n : quotient
}

const divideIntegersRounded = (numerator: bigint, denominator: bigint, mode: RoundingMode): bigint => {
  if (denominator === 0n) throw new RangeError("Division by zero")
  if (denominator < 0n) return divideIntegersRounded(-numerator, -denominator, mode)
  switch (mode) {
    case "down":
      return floorDiv(numerator, denominator)
    case "up":
      return -floorDiv(-numerator, denominator)
    case "halfUp":
      // floor(n/d + 1/2) = floor((2n + d) / 2d)
      return floorDiv(2n * numerator + denominator, 2n * denominator)
  }
}

/**
 * Parses a plain non-negative decimal such as "0", "12" or "3950.25".
 * Rejects signs, exponents, whitespace, leading zeros ("01"), a bare "." edge
 * ("1.", ".5") and more than `maxDecimals` fraction digits.
 * (`BigDecimal.fromString` accepts all of those, and maps "" to 0.)
 */
export const parsePlainDecimal = (s: string, maxDecimals: number): Option.Option<BigDecimal.BigDecimal> => {
  assertScale(maxDecimals, "maxDecimals")
  const match = PLAIN_DECIMAL.exec(s)
  if (match === null) return Option.none()
  const integerPart = match[1] ?? ""
  const fractionPart = match[2] ?? ""
  if (fractionPart.length > maxDecimals) return Option.none()
  return Option.some(BigDecimal.make(BigInt(integerPart + fractionPart), fractionPart.length))
}

/** `a / b` rounded to `scale` fraction digits, computed exactly (no precision cut-off). */
export const divideRounded = (
  a: BigDecimal.BigDecimal,
  b: BigDecimal.BigDecimal,
  scale: number,
  mode: RoundingMode
): BigDecimal.BigDecimal => {
  assertScale(scale, "scale")
  // a / b = (a.value / b.value) * 10^(b.scale - a.scale); we want that times 10^scale as an integer.
  const exponent = b.scale - a.scale + scale
  const numerator = exponent >= 0 ? a.value * pow10(exponent) : a.value
  const denominator = exponent >= 0 ? b.value : b.value * pow10(-exponent)
  return BigDecimal.make(divideIntegersRounded(numerator, denominator, mode), scale)
}

const ONE = BigDecimal.fromBigInt(1n)

/** Rounds toward +∞ to `scale` fraction digits. */
export const roundUp = (x: BigDecimal.BigDecimal, scale: number): BigDecimal.BigDecimal =>
  divideRounded(x, ONE, scale, "up")

/** Rounds toward −∞ to `scale` fraction digits. */
export const roundDown = (x: BigDecimal.BigDecimal, scale: number): BigDecimal.BigDecimal =>
  divideRounded(x, ONE, scale, "down")

/** Rounds to nearest at `scale` fraction digits, ties toward +∞. */
export const roundHalfUp = (x: BigDecimal.BigDecimal, scale: number): BigDecimal.BigDecimal =>
  divideRounded(x, ONE, scale, "halfUp")

/**
 * `x` as an integer count of 10^-decimals units (e.g. USDC base units for decimals 6).
 * Throws a RangeError if `x` has more than `decimals` significant fraction digits:
 * silently dropping money is never the right default.
 */
export const toBaseUnits = (x: BigDecimal.BigDecimal, decimals: number): bigint => {
  assertScale(decimals, "decimals")
  const normalized = BigDecimal.normalize(x)
  if (normalized.scale > decimals) {
    throw new RangeError(`${BigDecimal.format(x)} has more than ${decimals} fraction digits`)
  }
  // normalized.scale may be negative (e.g. 1000 is stored as 1 × 10^3)
  return normalized.value * pow10(decimals - normalized.scale)
}

export const fromBaseUnits = (units: bigint, decimals: number): BigDecimal.BigDecimal => {
  assertScale(decimals, "decimals")
  return BigDecimal.make(units, decimals)
}

/**
 * Plain decimal string with exactly `scale` fraction digits, no exponent and no
 * grouping: formatFixed(63.29114, 6) = "63.291140"; scale 0 prints no dot.
 * Throws (like `toBaseUnits`) if `x` needs more than `scale` digits; round first.
 * (`BigDecimal.format` switches to exponent notation from 16 fraction digits on.)
 */
export const formatFixed = (x: BigDecimal.BigDecimal, scale: number): string => {
  const units = toBaseUnits(x, scale)
  const sign = units < 0n ? "-" : ""
  const digits = (units < 0n ? -units : units).toString().padStart(scale + 1, "0")
  const integerPart = digits.slice(0, digits.length - scale)
  const fractionPart = digits.slice(digits.length - scale)
  return scale === 0 ? sign + integerPart : `${sign}${integerPart}.${fractionPart}`
}

/**
 * The exact sum of decimal strings written with `scale` fraction digits: never rounded (a part with more fraction
 * digits than `scale` is a RangeError, as in `toBaseUnits`).
 */
export const sumFixed = (values: ReadonlyArray<string>, scale: number): string =>
  formatFixed(
    values.reduce(
      (total, value) => BigDecimal.sum(total, BigDecimal.fromStringUnsafe(value)),
      BigDecimal.fromBigInt(0n)
    ),
    scale
  )
