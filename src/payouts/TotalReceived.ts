import { BigDecimal, Effect, Option, Schema, SchemaGetter, SchemaIssue } from "effect"
import { DESTINATION_COP_DECIMALS, formatFixed } from "../money/index.ts"

const PLAIN_DECIMAL = /^(0|[1-9][0-9]*)(?:\.([0-9]+))?$/

/**
 * A COP amount as the provider reports it (its transfer receipt's `final_amount`), as the exact decimal string
 * with 2 decimals we store and show ("251265.8" → "251265.80"). Refused: signs, exponents, spaces, and
 * digits below the cent ("0.005"): money is never rounded silently. Trailing zeros are fine ("10.500").
 */
export const normalizeCop = (text: string): Option.Option<string> => {
  const match = PLAIN_DECIMAL.exec(text)
  if (match === null) return Option.none()
  const fraction = match[2] ?? ""
  const amount = BigDecimal.normalize(BigDecimal.make(BigInt(`${match[1]}${fraction}`), fraction.length))
  return amount.scale > DESTINATION_COP_DECIMALS
    ? Option.none()
    : Option.some(formatFixed(amount, DESTINATION_COP_DECIMALS))
}

/** `normalizeCop` as a Schema (decode only): a string that is not such an amount fails to decode. */
export const ReportedCop = Schema.String.pipe(
  Schema.decodeTo(Schema.String, {
    decode: SchemaGetter.transformEffect((text: string, options) =>
      Option.match(normalizeCop(text), {
        onNone: () =>
          Effect.fail(
            new SchemaIssue.InvalidValue({ message: "a plain COP amount with at most 2 decimals" }, text, options)
          ),
        onSome: Effect.succeed
      })
    ),
    encode: SchemaGetter.passthrough()
  })
)
