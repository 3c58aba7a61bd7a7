export {
  divideRounded,
  formatFixed,
  fromBaseUnits,
  parsePlainDecimal,
  roundDown,
  roundHalfUp,
  roundUp,
  type RoundingMode,
  sumFixed,
  toBaseUnits
} from "./Decimal.ts"
export {
  type BelowMinimum,
  COMMISSION_DISPLAY_DECIMALS,
  computePayout,
  DESTINATION_COP_DECIMALS,
  DISPLAY_RATE_DECIMALS,
  displayRate,
  EFFECTIVE_RATE_DECIMALS,
  formatEffectiveRate,
  formatPayoutAmounts,
  MINIMUM_PAYOUT_COP,
  MINIMUM_PROVIDER_DEPOSIT_USD,
  type PayoutAmounts,
  type PayoutAmountsWire,
  type PayoutInput,
  PROVIDER_DEVELOPER_FEE_RATE,
  quoteWithoutAmount,
  type RateQuote,
  SERVICE_FEE_RATE
} from "./Fees.ts"
