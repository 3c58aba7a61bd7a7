import { Schema, SchemaTransformation } from "effect"
import { DestinationPreview, PreviewIdInput } from "./Destination.ts"
import { PAYOUT_EXAMPLE } from "./Examples.ts"
import { IntegrationId, PayoutId } from "./Ids.ts"
import { PayoutFailure, PayoutRefund, RefundStatus } from "./PayoutFailure.ts"
import {
  Address,
  atMost,
  BreBKey,
  CopAmount,
  DecimalString,
  FundingToken,
  IsoTimestamp,
  matching,
  NonEmptyText,
  TxHash,
  unnamed
} from "./Primitives.ts"

export const FeeLegCode = Schema.Literals(["swap", "bridge_fx", "bridge", "copby"]).annotate({
  identifier: "FeeLegCode",
  description:
    "`swap` token swap, `bridge_fx` provider FX spread vs mid-market, `bridge` provider developer fee (0.5%), `copby` service fee (1%, paid onchain)"
})
export const FeeLegStatus = Schema.Literals(["quoted", "verified", "pending"]).annotate({ identifier: "FeeLegStatus" })

export const FeeLeg = Schema.Struct({
  code: FeeLegCode,
  amountUsd: DecimalString,
  to: Schema.NullOr(Schema.String),
  status: FeeLegStatus
}).annotate({ identifier: "FeeLeg" })
export type FeeLeg = typeof FeeLeg.Type

export const PayoutStatus = Schema.Literals([
  "awaiting_deposit",
  "deposit_confirmed",
  "processing",
  "completed",
  "expired",
  "failed",
  "refunded"
]).annotate({
  identifier: "PayoutStatus",
  description:
    "awaiting_deposit → deposit_confirmed → processing → completed; side exits expired, failed, refunded. Only moves forward; an expired payout whose funds the provider reports arriving late moves on through deposit_confirmed."
})
export type PayoutStatus = typeof PayoutStatus.Type

export const PayoutTimelineStatus = Schema.Literals([
  "created",
  "deposit_mined",
  "funds_received",
  "deposit_confirmed",
  "processing",
  "completed",
  "failed",
  "refunded",
  "expired",
  "delayed"
]).annotate({
  identifier: "PayoutTimelineStatus",
  description:
    "A hop of the payout's journey. Hops named after a PayoutStatus are its status changes (`created`: it was prepared, `awaiting_deposit`; `processing`: the provider submitted the transfer to Bre-B); `deposit_mined`: the block holding the deposit was mined (`at` is the block's time, never before `created` nor after the confirm that read it: see `blockTime`); `funds_received`: the provider reported the deposit arriving; `delayed`: the payout stayed in deposit_confirmed or processing longer than the service's threshold (`payout.delayed` was sent)."
})
export type PayoutTimelineStatus = typeof PayoutTimelineStatus.Type

export const PayoutTimelineSource = Schema.Literals([
  "api",
  "chain",
  "mock_chain",
  "provider_webhook",
  "mock_provider",
  "reconciler",
  "sweep",
  "test_helper",
  "backfill"
]).annotate({
  identifier: "PayoutTimelineSource",
  description:
    "Who reported the hop: `api` a request of the partner's (create, confirm); `chain` the deposit's block, read from the chain; `mock_chain` mock mode's chain (the confirm's moment stands in for the block's time); `provider_webhook` the payout provider's webhook; `mock_provider` mock mode's provider moving the transfer on by itself; `reconciler` the service asking the provider about a payout no webhook moved (a lost webhook); `sweep` the service's own sweeps (deposit window expiry, delay); `test_helper` a mock-mode test helper; `backfill` reconstructed for a payout made before timelines existed."
})
export type PayoutTimelineSource = typeof PayoutTimelineSource.Type

export const PayoutTimelineHop = Schema.Struct({
  status: PayoutTimelineStatus,
  at: IsoTimestamp,
  source: PayoutTimelineSource,
  refundStatus: Schema.optionalKey(RefundStatus).annotate({
    description:
      "On a `refunded` hop recorded after the status change: the refund's new status (`sent`: the provider named its transaction; `verified`: the service saw it onchain)"
  }),
  blockTime: Schema.optionalKey(IsoTimestamp)
}).annotate({
  identifier: "PayoutTimelineHop",
  description:
    "One hop: its `status`, when it happened (`at`) and who reported it (`source`). `blockTime`, on a `deposit_mined` hop read from the chain (`source: chain`) only, is the block's own timestamp: whole seconds, by the chain's clock. That hop's `at` is the block's time held between the payout's `createdAt` and the confirm that read the block, so the timeline reads in the order things happened (a deposit mined in the payout's first second is not listed before `created`)."
})
export type PayoutTimelineHop = typeof PayoutTimelineHop.Type

export const PreparedTx = Schema.Struct({
  approvalTarget: Schema.NullOr(Schema.String),
  to: Schema.String,
  data: Schema.String,
  value: Schema.String
}).annotate({ identifier: "PreparedTx", description: "Transaction for the user to sign in their own wallet" })
export type PreparedTx = typeof PreparedTx.Type

export const WalletCall = Schema.Struct({
  to: Schema.String,
  data: Schema.String,
  value: Schema.String.annotate({ description: "Wei, as a hex quantity (`0x0`)" })
}).annotate({ identifier: "WalletCall", description: "One call of an EIP-5792 batch" })
export type WalletCall = typeof WalletCall.Type

export const WalletSendCalls = Schema.Struct({
  version: Schema.Literal("2.0.0"),
  chainId: Schema.String.annotate({ description: "The chain's id as a hex quantity (`0xa4ec`: Celo)" }),
  from: Schema.String.annotate({ description: "The payout's `userAddress`" }),
  atomicRequired: Schema.Literal(true),
  calls: Schema.Array(WalletCall)
}).annotate({
  identifier: "WalletSendCalls",
  description:
    "The parameters of an EIP-5792 `wallet_sendCalls` request (`params: [calls]`): the deposit and fee transfers as one atomic batch, one signature. Its transaction hash confirms both: confirm with it as `txHash` (no `feeTxHash`) and the `copby` leg is verified from the same receipt."
})
export type WalletSendCalls = typeof WalletSendCalls.Type

export const RateDisplay = Schema.String.check(
  matching(/^1 USD = [0-9]+(\.[0-9]+)? COP$/)
).annotate({
  identifier: "RateDisplay",
  description: "Text of the form `1 USD = <rate> COP`"
})

export const PayoutQuote = Schema.Struct({
  display: Schema.NullOr(RateDisplay),
  effectiveUsdCop: Schema.NullOr(DecimalString)
}).annotate({ identifier: "PayoutQuote" })

export const PayoutReceipt = Schema.Struct({
  title: Schema.String,
  status: PayoutStatus,
  completedAt: Schema.NullOr(IsoTimestamp),
  transactionType: Schema.Literal("withdrawal"),
  payoutId: PayoutId,
  breBKey: Schema.NullOr(Schema.String).annotate({ description: "Masked: only the last 4 characters shown" }),
  breBKeyLast4: Schema.NullOr(Schema.String),
  beneficiaryName: Schema.NullOr(Schema.String),
  totalPaid: Schema.Struct({ amount: DecimalString, currency: Schema.Literal("USD") }),
  exchangeRate: Schema.Struct({
    display: Schema.NullOr(RateDisplay),
    effectiveUsdCop: Schema.NullOr(DecimalString),
    sellRateUsdCop: Schema.NullOr(DecimalString).annotate({
      description: "Wholesale rate for operations; hide in consumer interfaces"
    })
  }),
  commission: Schema.Struct({
    mode: Schema.Literal("included_in_rate"),
    displayAmount: DecimalString,
    displayCurrency: Schema.Literals(["COP", "USD"]),
    note: Schema.String
  }),
  totalReceived: Schema.Struct({ amount: DecimalString, currency: Schema.Literal("COP") }),
  feesItemized: Schema.Array(FeeLeg)
}).annotate({
  identifier: "PayoutReceipt",
  description: "Consumer receipt (REQ-INT-RCPT-01). Fees are included in exchangeRate.effectiveUsdCop."
})
export type PayoutReceipt = typeof PayoutReceipt.Type

export const Payout = Schema.Struct({
  payoutId: PayoutId,
  status: PayoutStatus,
  fromToken: FundingToken,
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
  calls: Schema.NullOr(WalletSendCalls).annotate({
    description:
      "`transaction` and `feeTransaction` as one EIP-5792 batch for wallets that support `wallet_sendCalls` (smart-contract wallets, EIP-7702 accounts). Null when the deployment names no chain id (`CHAIN_ID`, mock mode) or when `transaction` needs an approval first (a COPm payout)."
  }),
  destinationPreview: DestinationPreview,
  txHash: Schema.NullOr(TxHash),
  feeTxHash: Schema.NullOr(TxHash),
  createdAt: IsoTimestamp,
  updatedAt: IsoTimestamp,
  expiresAt: IsoTimestamp,
  failure: PayoutFailure.pipe(Schema.NullOr),
  refund: PayoutRefund.pipe(Schema.NullOr),
  timeline: Schema.Array(PayoutTimelineHop).annotate({
    description:
      "When each hop happened, ordered by `at` (hops at the same moment in the order they were recorded). Written in the same transaction as the status change it records; grows, never rewritten."
  })
}).annotate({
  identifier: "Payout",
  description: "A prepared or progressing Bre-B payout",
  examples: [PAYOUT_EXAMPLE]
})
export type Payout = typeof Payout.Type

export const CreatePayoutRequest = Schema.Struct({
  userAddress: Address,
  destinationCop: CopAmount,
  breBKey: BreBKey,
  accountOwnerName: NonEmptyText(140).annotate({
    description:
      "The Bre-B account holder's name as their bank has it (at most 140 characters); checked against the key's owner"
  }),
  fromToken: Schema.optionalKey(FundingToken),
  quoteId: Schema.optionalKey(NonEmptyText(64).pipe(Schema.brand("QuoteId"))),
  previewId: Schema.optionalKey(PreviewIdInput.annotate({
    description:
      "A `previewId` from destinations/preview of this integration, unexpired, for this `breBKey`, `accountOwnerName` (and `userAddress`, when the preview named one): its verified destination is reused instead of registered again (400 naming `previewId` otherwise; a preview whose `match` was false is 409 `destination_mismatch`)"
  }))
}).annotate({ identifier: "CreatePayoutRequest" })
export type CreatePayoutRequest = typeof CreatePayoutRequest.Type

export const ConfirmPayoutRequest = Schema.Struct({
  txHash: TxHash,
  feeTxHash: Schema.optionalKey(TxHash)
}).annotate({ identifier: "ConfirmPayoutRequest" })
export type ConfirmPayoutRequest = typeof ConfirmPayoutRequest.Type

export const PayoutList = Schema.Struct({
  integrationId: IntegrationId,
  items: Schema.Array(Payout),
  nextCursor: Schema.NullOr(Schema.String)
}).annotate({ identifier: "PayoutList" })
export type PayoutList = typeof PayoutList.Type

/** Digits only: `Number()` would also take `1e2`, `0x10` or ` 100`, and turns `abc` into NaN. */
const LimitDigits = Schema.String.check(
  matching(
    /^(0|[1-9][0-9]*)$/,
    "must be an integer in plain decimal digits (no sign, exponent, hex prefix, leading zeros or spaces)"
  )
).annotate({ description: "Page size: an integer from 1 to 500 in plain decimal digits (default 50)" })

/** `limit`: the page size, text on the wire (digits only), a number in code. */
export const ListLimit = LimitDigits.pipe(
  Schema.decodeTo(
    Schema.Number.check(Schema.isBetween({ minimum: 1, maximum: 500 }, { message: "must be between 1 and 500" })),
    SchemaTransformation.numberFromString
  )
)

/**
 * How the document shows `limit`: a query value is text on the wire, documented as the integer it is, so generated
 * clients take a number. JSON Schema generation describes the wire text and has no per-schema override, so the
 * document's finishing step (OpenApiDocument.ts) puts this on every `limit` query parameter.
 */
export const ListLimitJsonSchema = {
  type: "integer",
  minimum: 1,
  maximum: 500,
  default: 50,
  description: "Page size, 1 to 500 (default 50)"
} as const

/** `cursor`: the previous page's `nextCursor`, passed back unchanged. */
export const ListCursor = Schema.String.check(atMost(512)).annotate({
  description: "The previous page's `nextCursor`, unchanged (opaque; omit it for the first page)"
})

/** `createdTo`: the exclusive upper bound on `createdAt`, with `createdFrom` a half-open range. */
export const CreatedTo = unnamed(IsoTimestamp, {
  description:
    "Only items created before this moment (exclusive; with `createdFrom`, the range `[createdFrom, createdTo)`). Must be later than `createdFrom`.",
  examples: ["2026-12-01T00:00:00.000Z"]
})

export const ListPayoutsParams = Schema.Struct({
  createdFrom: Schema.optionalKey(IsoTimestamp),
  createdTo: Schema.optionalKey(CreatedTo),
  status: Schema.optionalKey(unnamed(PayoutStatus, {
    description:
      "Only payouts in this status when the page is read (one of PayoutStatus). A payout that reaches it after its place in the list was paged past is not listed again: follow status changes with events."
  })),
  txHash: Schema.optionalKey(unnamed(TxHash, {
    description:
      "Only the payout whose `txHash` or `feeTxHash` is this transaction hash (any letter case): the deposit or fee transaction the payout was confirmed with",
    examples: [TxHash.make("0x9b2f4c1e8a7d6b5c4e3f2a1b0c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1d")]
  })),
  breBKeyLast4: Schema.optionalKey(
    Schema.String.check(
      matching(/^[!-~]{4}$/, "must be exactly 4 characters of a Bre-B key (printable ASCII, no spaces)")
    ).annotate({
      description:
        "Only payouts to a Bre-B key ending in these 4 characters (the receipt's `breBKeyLast4`), in any letter case",
      examples: ["2024"]
    })
  ),
  limit: Schema.optionalKey(ListLimit),
  cursor: Schema.optionalKey(ListCursor)
})
