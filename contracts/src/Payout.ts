import { Schema } from "effect"
import { PAYOUT_EXAMPLE } from "./Examples.ts"
import { IntegrationId, PayoutId } from "./Ids.ts"
import {
  Address,
  BreBKey,
  CopAmount,
  DecimalString,
  FundingToken,
  IsoTimestamp,
  NonEmptyText,
  RejectUnknownFields,
  TxHash
} from "./Primitives.ts"

export const FeeLegCode = Schema.Literal("swap", "bridge_fx", "bridge", "copby").annotations({
  identifier: "FeeLegCode",
  description:
    "`swap` token swap, `bridge_fx` provider FX spread vs mid-market, `bridge` provider developer fee (0.5%), `copby` service fee (1%, paid onchain)"
})
export const FeeLegStatus = Schema.Literal("quoted", "verified", "pending").annotations({ identifier: "FeeLegStatus" })

export const FeeLeg = Schema.Struct({
  code: FeeLegCode,
  amountUsd: DecimalString,
  to: Schema.NullOr(Schema.String),
  status: FeeLegStatus
}).annotations({ identifier: "FeeLeg" })
export type FeeLeg = typeof FeeLeg.Type

export const PayoutStatus = Schema.Literal(
  "awaiting_deposit",
  "deposit_confirmed",
  "processing",
  "completed",
  "expired",
  "failed",
  "refunded"
).annotations({
  identifier: "PayoutStatus",
  description:
    "awaiting_deposit → deposit_confirmed → processing → completed; side exits expired, failed, refunded. Only moves forward; an expired payout whose funds the provider reports arriving late moves on through deposit_confirmed."
})
export type PayoutStatus = typeof PayoutStatus.Type

export const PreparedTx = Schema.Struct({
  approvalTarget: Schema.NullOr(Schema.String),
  to: Schema.String,
  data: Schema.String,
  value: Schema.String
}).annotations({ identifier: "PreparedTx", description: "Transaction for the user to sign in their own wallet" })
export type PreparedTx = typeof PreparedTx.Type

export const RateDisplay = Schema.String.pipe(Schema.pattern(/^1 USD = [0-9]+(\.[0-9]+)? COP$/)).annotations({
  identifier: "RateDisplay",
  description: "Text of the form `1 USD = <rate> COP`"
})

export const PayoutQuote = Schema.Struct({
  display: Schema.NullOr(RateDisplay),
  effectiveUsdCop: Schema.NullOr(DecimalString)
}).annotations({ identifier: "PayoutQuote" })

export const PayoutReceipt = Schema.Struct({
  title: Schema.String,
  status: PayoutStatus,
  completedAt: Schema.NullOr(IsoTimestamp),
  transactionType: Schema.Literal("withdrawal"),
  payoutId: PayoutId,
  breBKey: Schema.NullOr(Schema.String).annotations({ description: "Masked: only the last 4 characters shown" }),
  breBKeyLast4: Schema.NullOr(Schema.String),
  beneficiaryName: Schema.NullOr(Schema.String),
  totalPaid: Schema.Struct({ amount: DecimalString, currency: Schema.Literal("USD") }),
  exchangeRate: Schema.Struct({
    display: Schema.NullOr(RateDisplay),
    effectiveUsdCop: Schema.NullOr(DecimalString),
    sellRateUsdCop: Schema.NullOr(DecimalString).annotations({
      description: "Wholesale rate for operations; hide in consumer interfaces"
    })
  }),
  commission: Schema.Struct({
    mode: Schema.Literal("included_in_rate"),
    displayAmount: DecimalString,
    displayCurrency: Schema.Literal("COP", "USD"),
    note: Schema.String
  }),
  totalReceived: Schema.Struct({ amount: DecimalString, currency: Schema.Literal("COP") }),
  feesItemized: Schema.Array(FeeLeg)
}).annotations({
  identifier: "PayoutReceipt",
  description: "Consumer receipt (REQ-INT-RCPT-01). Fees are included in exchangeRate.effectiveUsdCop."
})
export type PayoutReceipt = typeof PayoutReceipt.Type

export const Payout = Schema.Struct({
  payoutId: PayoutId,
  status: PayoutStatus,
  fromToken: Schema.String,
  sourceAmount: DecimalString,
  destinationCop: DecimalString,
  userAddress: Schema.String,
  fees: Schema.Array(FeeLeg),
  quote: PayoutQuote,
  receipt: PayoutReceipt,
  deposit: Schema.Struct({
    chain: Schema.String,
    currency: Schema.String,
    address: Schema.String,
    amount: DecimalString
  }),
  transaction: PreparedTx,
  feeTransaction: PreparedTx,
  destinationPreview: Schema.Struct({
    accountOwnerName: Schema.String,
    bankName: Schema.NullOr(Schema.String),
    documentLast4: Schema.NullOr(Schema.String)
  }),
  txHash: Schema.NullOr(TxHash),
  feeTxHash: Schema.NullOr(TxHash),
  createdAt: IsoTimestamp,
  updatedAt: IsoTimestamp,
  expiresAt: IsoTimestamp
}).annotations({
  identifier: "Payout",
  description: "A prepared or progressing Bre-B payout",
  examples: [PAYOUT_EXAMPLE]
})
export type Payout = typeof Payout.Type

export const CreatePayoutRequest = Schema.Struct({
  userAddress: Address,
  destinationCop: CopAmount,
  breBKey: BreBKey,
  accountOwnerName: NonEmptyText(140).annotations({
    description:
      "The Bre-B account holder's name as their bank has it (at most 140 characters); checked against the key's owner"
  }),
  fromToken: Schema.optionalWith(FundingToken, { exact: true }),
  quoteId: Schema.optionalWith(NonEmptyText(64).pipe(Schema.brand("QuoteId")), { exact: true })
}).annotations({ identifier: "CreatePayoutRequest", ...RejectUnknownFields })
export type CreatePayoutRequest = typeof CreatePayoutRequest.Type

export const ConfirmPayoutRequest = Schema.Struct({
  txHash: TxHash,
  feeTxHash: Schema.optionalWith(TxHash, { exact: true })
}).annotations({ identifier: "ConfirmPayoutRequest", ...RejectUnknownFields })
export type ConfirmPayoutRequest = typeof ConfirmPayoutRequest.Type

export const PayoutList = Schema.Struct({
  integrationId: IntegrationId,
  items: Schema.Array(Payout),
  nextCursor: Schema.NullOr(Schema.String)
}).annotations({ identifier: "PayoutList" })
export type PayoutList = typeof PayoutList.Type

/** Digits only: `Number()` would also take `1e2`, `0x10` or ` 100`. */
const LimitDigits = Schema.String.pipe(
  Schema.pattern(/^(0|[1-9][0-9]*)$/, {
    message: () => "must be an integer in plain decimal digits (no sign, exponent, hex prefix, leading zeros or spaces)"
  })
).annotations({ description: "Page size: an integer from 1 to 500 in plain decimal digits (default 50)" })

export const ListLimit = Schema.compose(LimitDigits, Schema.NumberFromString).pipe(
  Schema.between(1, 500, { message: () => "must be between 1 and 500" })
).annotations({
  // A query value is text on the wire; documented as the integer it is, so generated clients take a number.
  jsonSchema: {
    type: "integer",
    minimum: 1,
    maximum: 500,
    default: 50,
    description: "Page size, 1 to 500 (default 50)"
  }
})

/** `cursor`: the previous page's `nextCursor`, passed back unchanged. */
export const ListCursor = Schema.String.pipe(Schema.maxLength(512)).annotations({
  description: "The previous page's `nextCursor`, unchanged (opaque; omit it for the first page)"
})

export const ListPayoutsParams = Schema.Struct({
  createdFrom: Schema.optionalWith(IsoTimestamp, { exact: true }),
  limit: Schema.optionalWith(ListLimit, { exact: true }),
  cursor: Schema.optionalWith(ListCursor, { exact: true })
})
