import { Schema } from "effect"
import { QUOTE_EXAMPLE } from "./Examples.ts"
import { QuoteId } from "./Ids.ts"
import { CopAmount, DecimalString, FundingToken, IsoTimestamp } from "./Primitives.ts"
import { FeeLeg, RateDisplay } from "./Payout.ts"

export const QuoteParams = Schema.Struct({
  destinationCop: Schema.optionalKey(CopAmount),
  fromToken: Schema.optionalKey(FundingToken)
})

export const Quote = Schema.Struct({
  quoteId: QuoteId,
  fromToken: FundingToken,
  display: RateDisplay,
  effectiveUsdCop: DecimalString,
  sellRateUsdCop: DecimalString,
  cached: Schema.Boolean.annotate({
    description: "false when this call fetched the rate from the provider, true when served from the shared cache"
  }),
  expiresAt: IsoTimestamp,
  destinationCop: Schema.optionalKey(DecimalString),
  sourceAmount: Schema.optionalKey(DecimalString),
  fees: Schema.optionalKey(Schema.Array(FeeLeg))
}).annotate({
  identifier: "Quote",
  description:
    "A USD→COP quote; with destinationCop also the amounts, exactly as a payout from fromToken created now would carry them (COPm: sourceAmount in COPm, the `swap` leg first). A quote with destinationCop binds that amount and token; one without fixes the rate only (for COPm too: the rate in USD, the swap priced with an amount).",
  examples: [QUOTE_EXAMPLE]
})
export type Quote = typeof Quote.Type
