/**
 * Exact decimal arithmetic for checking amounts a deployment returns: a value is `units × 10^-scale`
 * over bigint, never a JavaScript number. Only what the checks need: parse, add, multiply, divide with
 * an explicit rounding direction, compare, format.
 */
export interface Decimal {
  readonly units: bigint
  readonly scale: number
}

const PLAIN = /^(0|[1-9][0-9]*)(?:\.([0-9]+))?$/

const pow10 = (exponent: number): bigint => 10n ** BigInt(exponent)

/** A plain non-negative decimal string ("63.291140"); undefined for anything else. */
export const parseDecimal = (text: string): Decimal | undefined => {
  const match = PLAIN.exec(text)
  if (match === null) return undefined
  const fraction = match[2] ?? ""
  return { units: BigInt(`${match[1]}${fraction}`), scale: fraction.length }
}

export const decimal = (text: string): Decimal => {
  const parsed = parseDecimal(text)
  if (parsed === undefined) throw new RangeError(`not a plain decimal: ${text}`)
  return parsed
}

/** Number of fraction digits written in `text` ("25.379423" → 6). */
export const fractionDigits = (text: string): number => text.split(".")[1]?.length ?? 0

const aligned = (a: Decimal, b: Decimal): readonly [bigint, bigint, number] => {
  const scale = Math.max(a.scale, b.scale)
  return [a.units * pow10(scale - a.scale), b.units * pow10(scale - b.scale), scale]
}

export const add = (a: Decimal, b: Decimal): Decimal => {
  const [x, y, scale] = aligned(a, b)
  return { units: x + y, scale }
}

export const subtract = (a: Decimal, b: Decimal): Decimal => {
  const [x, y, scale] = aligned(a, b)
  return { units: x - y, scale }
}

export const multiply = (a: Decimal, b: Decimal): Decimal => ({ units: a.units * b.units, scale: a.scale + b.scale })

export const compare = (a: Decimal, b: Decimal): -1 | 0 | 1 => {
  const [x, y] = aligned(a, b)
  return x < y ? -1 : x > y ? 1 : 0
}

export const abs = (x: Decimal): Decimal => (x.units < 0n ? { ...x, units: -x.units } : x)

export const equals = (a: Decimal, b: Decimal): boolean => compare(a, b) === 0

/** Two decimal strings with the same value ("100000" and "100000.00"). */
export const sameValue = (a: string, b: string): boolean => equals(decimal(a), decimal(b))

export type Rounding = "floor" | "ceil"

const divideUnits = (numerator: bigint, denominator: bigint, rounding: Rounding): bigint => {
  const quotient = numerator / denominator
  return rounding === "ceil" && quotient * denominator !== numerator ? quotient + 1n : quotient
}

/** `a / b` rounded to `scale` fraction digits, exactly (non-negative operands). */
export const divide = (a: Decimal, b: Decimal, scale: number, rounding: Rounding): Decimal => ({
  units: divideUnits(a.units * pow10(b.scale + scale), b.units * pow10(a.scale), rounding),
  scale
})

export const round = (x: Decimal, scale: number, rounding: Rounding): Decimal =>
  scale >= x.scale
    ? { units: x.units * pow10(scale - x.scale), scale }
    : { units: divideUnits(x.units, pow10(x.scale - scale), rounding), scale }

/** Fixed-point text with exactly `scale` fraction digits; `x` must not need more. */
export const format = (x: Decimal, scale: number): string => {
  const exact = round(x, scale, "floor")
  if (!equals(exact, x)) throw new RangeError(`value needs more than ${scale} fraction digits`)
  const digits = exact.units.toString().padStart(scale + 1, "0")
  return scale === 0 ? digits : `${digits.slice(0, -scale)}.${digits.slice(-scale)}`
}

/** `x` as an integer count of 10^-decimals (token base units); `x` must not need more digits. */
export const toBaseUnits = (x: Decimal, decimals: number): bigint => round(x, decimals, "floor").units

export const show = (x: Decimal): string => format(x, x.scale)
