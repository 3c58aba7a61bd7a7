/**
 * Exact decimal arithmetic for the simulator's money: amounts are plain decimal strings on the wire
 * ("63.291140") and bigint base units inside; never `number`.
 */

const DECIMAL = /^(0|[1-9][0-9]*)(?:\.([0-9]+))?$/

/** A plain non-negative decimal string (no sign, exponent or spaces), as units and scale. */
export const parseDecimal = (text: string): { readonly units: bigint; readonly scale: number } | undefined => {
  const match = DECIMAL.exec(text)
  if (match === null) return undefined
  const fraction = match[2] ?? ""
  return { units: BigInt(`${match[1]}${fraction}`), scale: fraction.length }
}

export const isDecimal = (text: unknown): text is string => typeof text === "string" && parseDecimal(text) !== undefined

/** `text` in base units of a token with `decimals`; undefined when it is not a decimal or has more digits. */
export const toUnits = (text: string, decimals: number): bigint | undefined => {
  const parsed = parseDecimal(text)
  if (parsed === undefined || parsed.scale > decimals) return undefined
  return parsed.units * 10n ** BigInt(decimals - parsed.scale)
}

/** Base units as a decimal string with exactly `decimals` fraction digits ("63.291140"). */
export const formatUnits = (units: bigint, decimals: number): string => {
  const negative = units < 0n
  const digits = (negative ? -units : units).toString().padStart(decimals + 1, "0")
  const whole = digits.slice(0, digits.length - decimals)
  const fraction = digits.slice(digits.length - decimals)
  return `${negative ? "-" : ""}${whole}${decimals > 0 ? `.${fraction}` : ""}`
}

/** `units × percent / 100`, rounded half-up to whole units. */
export const percentOf = (units: bigint, percent: string): bigint => {
  const p = parseDecimal(percent)
  if (p === undefined) throw new Error(`not a decimal percent: ${percent}`)
  const denominator = 100n * 10n ** BigInt(p.scale)
  return (units * p.units * 2n + denominator) / (2n * denominator)
}

/** Token units (with `decimals`) converted at `rate` (destination per source unit), rounded down to cents. */
export const convertToCents = (units: bigint, decimals: number, rate: string): bigint => {
  const r = parseDecimal(rate)
  if (r === undefined) throw new Error(`not a decimal rate: ${rate}`)
  return (units * r.units * 100n) / (10n ** BigInt(decimals) * 10n ** BigInt(r.scale))
}

/** Cents as a two-decimal string ("251265.82"). */
export const formatCents = (cents: bigint): string => formatUnits(cents, 2)
