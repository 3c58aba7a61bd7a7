/**
 * Exact rationals over bigint (numerator / denominator, denominator > 0), for the money reference: written apart from
 * src/money and from effect's BigDecimal, so the reference does not grade the service with its own arithmetic.
 * No vitest import: the money check script runs it outside the test runner.
 */
export interface Rational {
  readonly n: bigint
  readonly d: bigint
}

const gcd = (a: bigint, b: bigint): bigint => {
  let [x, y] = [a < 0n ? -a : a, b]
  while (y !== 0n) [x, y] = [y, x % y]
  return x
}

export const rational = (n: bigint, d: bigint = 1n): Rational => {
  if (d === 0n) throw new RangeError("zero denominator")
  const sign = d < 0n ? -1n : 1n
  const divisor = gcd(n, d < 0n ? -d : d) || 1n
  return { n: (sign * n) / divisor, d: (sign * d) / divisor }
}

export const pow10 = (exponent: number): bigint => 10n ** BigInt(exponent)

/** `units` × 10^-scale. */
export const scaled = (units: bigint, scale: number): Rational => rational(units, pow10(scale))

export const add = (a: Rational, b: Rational): Rational => rational(a.n * b.d + b.n * a.d, a.d * b.d)
export const sub = (a: Rational, b: Rational): Rational => rational(a.n * b.d - b.n * a.d, a.d * b.d)
export const mul = (a: Rational, b: Rational): Rational => rational(a.n * b.n, a.d * b.d)
export const div = (a: Rational, b: Rational): Rational => rational(a.n * b.d, a.d * b.n)
export const compare = (a: Rational, b: Rational): -1 | 0 | 1 => {
  const left = a.n * b.d
  const right = b.n * a.d
  return left < right ? -1 : left > right ? 1 : 0
}
export const max = (a: Rational, b: Rational): Rational => (compare(a, b) >= 0 ? a : b)

const floorDiv = (n: bigint, d: bigint): bigint => {
  const q = n / d
  return n % d !== 0n && n < 0n ? q - 1n : q
}

/** floor(x × 10^scale): x rounded toward −∞, as units of 10^-scale. */
export const floorUnits = (x: Rational, scale: number): bigint => floorDiv(x.n * pow10(scale), x.d)
/** ceil(x × 10^scale). */
export const ceilUnits = (x: Rational, scale: number): bigint => -floorDiv(-x.n * pow10(scale), x.d)
/** x × 10^scale rounded to nearest, ties toward +∞. */
export const halfUpUnits = (x: Rational, scale: number): bigint => floorDiv(2n * x.n * pow10(scale) + x.d, 2n * x.d)

/** Units of a plain decimal string that must have exactly `scale` fraction digits (undefined otherwise). */
export const unitsOfWire = (wire: string, scale: number): bigint | undefined => {
  const match = (scale === 0 ? /^(0|[1-9][0-9]*)$/ : new RegExp(`^(0|[1-9][0-9]*)\\.([0-9]{${scale}})$`)).exec(wire)
  return match === null ? undefined : BigInt(`${match[1]}${match[2] ?? ""}`)
}

/** `units` × 10^-scale as a plain string with exactly `scale` fraction digits (units ≥ 0). */
export const wireOfUnits = (units: bigint, scale: number): string => {
  if (scale === 0) return units.toString()
  const digits = units.toString().padStart(scale + 1, "0")
  return `${digits.slice(0, -scale)}.${digits.slice(-scale)}`
}
