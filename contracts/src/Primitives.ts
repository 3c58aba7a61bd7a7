import { type JsonSchema, Schema } from "effect"
import { checksumAddress } from "./Evm.ts"

/**
 * A check on a string's form, documented in JSON Schema as `pattern`. Schema's own `isPattern` exports the pattern only
 * for a RegExp with the `u` flag (it cannot carry other flags), and adding `u` would change what ours match (code
 * points instead of UTF-16 units), so each says its pattern itself. Like v3's `Schema.pattern`, a failed check stops
 * the checks after it.
 */
export const matching = (regExp: RegExp, message?: string) =>
  Schema.isPattern(regExp, {
    ...(message === undefined ? {} : { message }),
    toJsonSchema: () => ({ pattern: regExp.source })
  }).abort()

/**
 * A check as a predicate, documented in JSON Schema as `documented`: keywords that accept exactly what the predicate
 * accepts, so a validator generated from the document refuses what the service refuses (the one check JSON Schema
 * cannot express, Address's EIP-55 checksum, is written out below). A failed check stops the checks after it, as v3's
 * `Schema.filter` did.
 */
export const rule = <T>(predicate: (value: T) => boolean, message: string, documented: JsonSchema.JsonSchema) =>
  Schema.makeFilter<T>((value) => predicate(value), { message, toJsonSchema: () => documented }).abort()

/**
 * At most `max` characters, counted as JSON Schema's `maxLength` counts them (code points, not UTF-16 units: an emoji
 * is one), so the document states the limit exactly.
 */
export const atMost = (max: number, message = `must be at most ${max} characters`) =>
  Schema.isMaxCodePoints(max, { message }).abort()

/** At least `min` characters (code points), documented as `minLength`. */
export const atLeast = (min: number, message?: string) =>
  Schema.isMinCodePoints(min, message === undefined ? undefined : { message }).abort()

/**
 * `schema` for one use that describes it its own way, documented inline instead of as its named component (the
 * form v3 gave a re-annotated schema, which the published document keeps).
 */
export const unnamed = <S extends Schema.Top>(
  schema: S,
  annotations: Schema.Annotations.Bottom<S["Type"], readonly []> = {}
) => schema.annotate({ ...annotations, identifier: undefined })

// eslint-disable-next-line no-control-regex -- control characters are what it refuses
const printable = /^[^\u0000-\u001f\u007f]*$/

/** Printable text: control characters (NUL, newlines, …) are never valid in names, keys or ids. */
export const PrintableText = Schema.String.check(matching(printable, "must not contain control characters"))

const CHECKSUM_RULE = "must be an EIP-55 checksummed address (mixed case, correct checksum)"

/**
 * The EIP-55 rule's failure for an address whose hex digits are all one case (what many wallets hand over) names its
 * checksummed form, in full to copy; a mixed-case address with a wrong checksum may be a typo, so it gets no guess.
 */
const checksumFailure = (value: string): string | undefined => {
  const checksummed = checksumAddress(value)
  if (checksummed === value) return undefined
  const digits = value.slice(2)
  const oneCase = digits === digits.toLowerCase() || digits === digits.toUpperCase()
  return oneCase ? `${CHECKSUM_RULE}; did you mean ${checksummed}?` : CHECKSUM_RULE
}

/** A user's wallet address as a request names it. */
export const Address = Schema.String.check(
  matching(/^0x[0-9a-fA-F]{40}$/, "must be a 0x-prefixed 20-byte hex address"),
  // The message is the predicate's own (with its hint), so the filter carries none. Keccak-256 is beyond JSON Schema:
  // left out of the document (`[{}, true]`: an approximation), the description says it.
  Schema.makeFilter<string>((value) => checksumFailure(value) ?? true, { toJsonSchema: () => [{}, true] }).abort()
).annotate({
  identifier: "Address",
  description:
    "EVM address in its EIP-55 checksummed form (mixed case, correct checksum; JSON Schema cannot check the checksum, the service does: an all-lowercase address is refused, naming its checksummed form)",
  examples: ["0x52908400098527886E0F7030069857D2E4169EE7"]
}).pipe(Schema.brand("UserAddress"))

export const TxHash = Schema.String.check(
  matching(/^0x[a-fA-F0-9]{64}$/, "must match ^0x[a-fA-F0-9]{64}$")
).annotate({
  identifier: "TxHash",
  description: "Transaction hash: 0x followed by 64 hexadecimal characters"
}).pipe(Schema.brand("TxHash"))
export type TxHash = typeof TxHash.Type

/** The one spelling a hash is stored and compared in: lower case (any case names the same transaction). */
export const lowerCaseTxHash = (hash: TxHash): TxHash => TxHash.make(hash.toLowerCase())

export const DecimalString = Schema.String.check(
  matching(/^(0|[1-9][0-9]*)(\.[0-9]+)?$/, "must be a plain non-negative decimal string (no sign, exponent or spaces)")
).annotate({
  identifier: "DecimalString",
  description: "Exact decimal amount as a string, e.g. \"63.291140\""
})

/** A decimal string (digits and at most one dot, checked before) with a digit other than 0 in it. */
export const greaterThanZero = rule((value: string) => /[1-9]/.test(value), "must be greater than 0", {
  not: { pattern: "^[0.]*$" }
})

export const CopAmount = Schema.String.check(
  matching(
    /^(0|[1-9][0-9]*)(\.[0-9]{1,2})?$/,
    "must be a plain decimal string with at most 2 decimals (no sign, exponent or spaces)"
  ),
  greaterThanZero
).annotate({
  identifier: "CopAmount",
  description: "Positive COP amount as a decimal string with at most 2 decimals",
  examples: ["250000", "4000.50"]
})

/**
 * An e-mail address in the common dot-atom form: a local part of at most 64 RFC 5322 atom characters
 * (dots only between them), then a host name of LDH labels ending in an alphabetic top-level domain.
 */
const emailAddress =
  /^(?=[^@]{1,64}@)[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}$/

const breBKeyForms = [
  /^@[A-Za-z0-9]{1,19}$/, // alias
  /^(\+57)?3[0-9]{9}$/, // mobile
  emailAddress,
  /^[0-9]{5,15}$/, // identity document
  /^[0-9]{4,10}-?[A-Za-z0-9]{0,4}$/ // merchant code
] as const

/** One pattern for all the forms, so the document carries the rule: each form is anchored, so this is `some(test)`. */
const anyBreBKeyForm = new RegExp(`^(?:${breBKeyForms.map((form) => form.source.slice(1, -1)).join("|")})$`)

export const BreBKey = PrintableText.check(
  atMost(254, "must be at most 254 characters"),
  matching(
    anyBreBKeyForm,
    "must be a Bre-B key: alias (@ + 1-19 alphanumerics), mobile (10 digits starting with 3, optional +57), e-mail, document (5-15 digits) or merchant code"
  )
).annotate({
  identifier: "BreBKey",
  description: "Bre-B key (llave) of the beneficiary",
  examples: ["@maria2024", "3001234567", "maria@example.com"]
})

export const Email = PrintableText.check(
  atMost(254, "must be at most 254 characters"),
  matching(emailAddress, "must be an e-mail address (local-part@host.tld)")
).annotate({ identifier: "Email", description: "E-mail address" })

const isoTimestampPattern =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-](\d{2}):(\d{2}))$/

const isLeapYear = (year: number) => year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)

const daysInMonth = (year: number, month: number) =>
  month === 2 ? (isLeapYear(year) ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31

/** Every field in range on the calendar: no February 30, hour 24, minute 60 or offset +24:00 (`Date.parse` rolls those over). */
const isCalendarDateTime = (value: string): boolean => {
  const match = isoTimestampPattern.exec(value)
  if (match === null) return false
  const [year, month, day, hour, minute, second, offsetHours, offsetMinutes] = match.slice(1).map((part) =>
    Number(part ?? 0)
  ) as [number, number, number, number, number, number, number, number]
  return month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth(year, month) && hour <= 23 && minute <= 59 &&
    second <= 59 && offsetHours <= 23 && offsetMinutes <= 59
}

/**
 * `isCalendarDateTime` as one pattern for the document (JSON Schema cannot compute): days 29-31 only in the months
 * that have them, February 29 only in leap years (divisible by 4, and by 400 at a century). Held equal to the
 * predicate by test/openapi/request-constraints.test.ts.
 */
const calendarDateTime = new RegExp(
  [
    "^(?:[0-9]{4}-(?:(?:0[1-9]|1[0-2])-(?:0[1-9]|1[0-9]|2[0-8])|(?:0[13-9]|1[0-2])-(?:29|30)|(?:0[13578]|1[02])-31)",
    "|(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:[02468][048]|[13579][26])00)-02-29)",
    "T(?:[01][0-9]|2[0-3]):[0-5][0-9](?::[0-5][0-9](?:\\.[0-9]{1,9})?)?",
    "(?:Z|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])$"
  ].join("")
)

/** A day on the calendar, `YYYY-MM-DD` (no time, no zone): a month 01-12 and a day the month has. */
export const CalendarDate = Schema.String.check(
  rule(
    (value: string) => {
      const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value)
      if (match === null) return false
      const [year, month, day] = match.slice(1).map(Number) as [number, number, number]
      return month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth(year, month)
    },
    "must be a calendar date YYYY-MM-DD (month 01-12, a day the month has), e.g. 2026-11-27",
    { pattern: calendarDateTime.source.replace(/T.*$/, "$") }
  )
).annotate({
  identifier: "CalendarDate",
  description: "A calendar date, `YYYY-MM-DD`",
  examples: ["2026-11-27"]
})

export const IsoTimestamp = Schema.String.check(
  rule(
    (value: string) => isoTimestampPattern.test(value),
    "must be an ISO 8601 timestamp with a time zone, e.g. 2026-11-22T03:19:32.123Z",
    {} // the calendar pattern below documents both: it accepts only what this one does
  ),
  rule(
    isCalendarDateTime,
    "must be a real calendar date and time (month 01-12, a day the month has, hour 00-23, minute and second 00-59)",
    { pattern: calendarDateTime.source }
  )
).annotate({
  identifier: "IsoTimestamp",
  description: "ISO 8601 timestamp with a time zone; the service answers in UTC with milliseconds",
  examples: ["2026-11-22T03:19:32.123Z"]
})

export const FundingToken = Schema.Literals(["USDC", "COPm"]).annotate({
  identifier: "FundingToken",
  description:
    "Token the user funds a payout from: `USDC` (a transfer to the deposit address), or the COP stablecoin `COPm` (a router swap whose USDC output goes to the deposit address)"
})
export type FundingToken = typeof FundingToken.Type

/** Text with something in it besides white space (`\\s` is the set `trim` removes), at most `max` characters. */
export const NonEmptyText = (max: number) =>
  PrintableText.check(
    rule((value: string) => value.trim().length > 0, "must not be empty", { minLength: 1, pattern: "\\S" }),
    atMost(max, `must be at most ${max} characters`)
  )

/**
 * For request bodies: a field the contract does not define is a 400 naming it (a misspelled `quoteID` must not
 * create a payout without its rate lock), as the document's `additionalProperties: false` says. v4 has no per-schema
 * parse options: IntegrationsApi sets these as its `HttpApi.PayloadParseOptions`, so every request body gets them;
 * decode a body elsewhere with `Schema.decodeUnknownEffect(schema)(input, RejectUnknownFields)`.
 */
export const RejectUnknownFields = { onExcessProperty: "error" } as const
