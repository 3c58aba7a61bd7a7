import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Authentication } from "./Auth.ts"
import { CreatePayoutHeaders, groupErrors } from "./Breb.ts"
import {
  BadGatewayError,
  ConflictError,
  ErrorBody,
  IdempotencyKeyReusedError,
  MercadoCerradoError,
  NeedsKycError,
  NotFoundError,
  RequoteError,
  ServiceUnavailableError,
  TxHashReusedError
} from "./Errors.ts"
import { MockScenarioHeaders } from "./Breb.ts"
import { IntegrationId } from "./Ids.ts"
import { CreatedTo, CreatePayoutRequest, ListCursor, ListLimit, Payout, PreparedTx, WalletSendCalls } from "./Payout.ts"
import {
  Address,
  atMost,
  DecimalString,
  FundingToken,
  IsoTimestamp,
  NonEmptyText,
  PrintableText,
  TxHash,
  unnamed
} from "./Primitives.ts"

/** `pb_…`, a batch of payouts signed once */
export const PayoutBatchId = Schema.String.pipe(Schema.brand("PayoutBatchId"))
export type PayoutBatchId = typeof PayoutBatchId.Type

/** The most items one batch takes. */
export const MAX_BATCH_ITEMS = 100

export const PayoutReference = NonEmptyText(140).annotate({
  identifier: "PayoutReference",
  description:
    "Your own reference for the payout (an invoice number, an employee id), up to 140 characters; shown with the batch's item and in reports"
})

/** One payout of a batch: a payout's own fields (the batch gives the user and the token), and your reference. */
export const PayoutBatchItemRequest = Schema.Struct({
  destinationCop: CreatePayoutRequest.fields.destinationCop,
  breBKey: CreatePayoutRequest.fields.breBKey,
  accountOwnerName: CreatePayoutRequest.fields.accountOwnerName,
  quoteId: CreatePayoutRequest.fields.quoteId,
  previewId: CreatePayoutRequest.fields.previewId,
  reference: Schema.optionalKey(PayoutReference)
}).annotate({
  identifier: "PayoutBatchItemRequest",
  description:
    "One payout of the batch. An item that is not valid (a field missing or broken, an amount below the minimum, a `quoteId` or `previewId` that does not apply) does not refuse the batch: its item carries the error and no payout is made for it"
})
export type PayoutBatchItemRequest = typeof PayoutBatchItemRequest.Type

/**
 * As the body carries an item: any JSON object, checked by the service on its own (PayoutBatchItemRequest), so that an
 * invalid item is that item's error and not the whole request's. The document shows PayoutBatchItemRequest.
 */
const ItemInput = Schema.Record(Schema.String, Schema.Unknown)

export const CreatePayoutBatchRequest = Schema.Struct({
  userAddress: Address.annotate({ description: "The wallet that funds every payout of the batch, KYC approved" }),
  fromToken: Schema.optionalKey(unnamed(FundingToken, {
    description: "`USDC` (the default); `COPm` batches are not offered (400): see the README"
  })),
  items: Schema.Array(ItemInput).check(
    Schema.isMinLength(1, { message: "must list at least one payout" }).abort(),
    Schema.isMaxLength(MAX_BATCH_ITEMS, { message: `must list at most ${MAX_BATCH_ITEMS} payouts` }).abort()
  )
}).annotate({ identifier: "CreatePayoutBatchRequest" })
export type CreatePayoutBatchRequest = typeof CreatePayoutBatchRequest.Type

export const PayoutBatchStatus = Schema.Literals([
  "prepared",
  "partially_confirmed",
  "confirmed",
  "completed",
  "completed_with_failures",
  "expired"
]).annotate({
  identifier: "PayoutBatchStatus",
  description:
    "Derived from its payouts: `prepared` none funded yet; `partially_confirmed` some confirmed, some still awaiting their deposit; `confirmed` all funded, some still on their way; `completed` all completed; `completed_with_failures` all finished, some failed, refunded or expired; `expired` none funded before their window closed"
})
export type PayoutBatchStatus = typeof PayoutBatchStatus.Type

const Int = Schema.Number.check(Schema.isInt({ toJsonSchema: () => ({ type: "integer" }) }))

export const PayoutBatchItem = Schema.Struct({
  index: unnamed(Int, { description: "The item's place in the request, from 0" }),
  reference: Schema.NullOr(Schema.String),
  payout: Schema.NullOr(Payout).annotate({ description: "The payout made for it; null when the item was not valid" }),
  error: Schema.NullOr(ErrorBody).annotate({
    description:
      "Why no payout was made for it (the ErrorBody a payout would have had: the field and the rule, and its `errorCode` when it has one); null when one was"
  }),
  depositError: Schema.NullOr(ErrorBody).annotate({
    description:
      "Why the batch's confirm left this item's payout awaiting its deposit: its transfer missing from the batch's transaction or short, its deposit window closed before the transaction was mined (`errorCode` `requote`), or the payout no longer taking a confirm; null when the confirm took it (or before any confirm). Such a payout can still be confirmed on its own (`POST payouts/{payoutId}/confirm`) with a transaction that pays its whole deposit"
  })
}).annotate({ identifier: "PayoutBatchItem" })
export type PayoutBatchItem = typeof PayoutBatchItem.Type

export const PayoutBatchTotals = Schema.Struct({
  count: unnamed(Int, { description: "The payouts made (the valid items)" }),
  sourceAmount: unnamed(DecimalString, {
    description:
      "What the user pays in `fromToken`: `depositAmount` plus `serviceFee`, the sum of the payouts' own `sourceAmount`"
  }),
  depositAmount: unnamed(DecimalString, { description: "The sum of the payouts' deposits (USDC)" }),
  serviceFee: unnamed(DecimalString, { description: "The sum of the payouts' service fees, paid in one transfer" }),
  destinationCop: unnamed(DecimalString, { description: "The sum of the payouts' `destinationCop`" })
}).annotate({
  identifier: "PayoutBatchTotals",
  description: "Exact sums of the batch's payouts (every item's amount as its payout has it; nothing rounded again)"
})
export type PayoutBatchTotals = typeof PayoutBatchTotals.Type

export const PayoutBatch = Schema.Struct({
  batchId: PayoutBatchId,
  status: PayoutBatchStatus,
  userAddress: Schema.String,
  fromToken: FundingToken,
  items: Schema.Array(PayoutBatchItem),
  totals: PayoutBatchTotals,
  feeTransaction: PreparedTx.annotate({
    description: "One transfer of the summed service fee to the fee wallet (instead of each payout's own)"
  }),
  calls: Schema.NullOr(WalletSendCalls).annotate({
    description:
      "Every deposit transfer and the one fee transfer as one EIP-5792 `wallet_sendCalls` batch, for the user's wallet to sign once; its hash confirms the batch"
  }),
  txHash: Schema.NullOr(TxHash).annotate({
    description: "The transaction that confirmed the batch (`POST payout-batches/{batchId}/confirm`); null before"
  }),
  createdAt: IsoTimestamp,
  expiresAt: IsoTimestamp
}).annotate({
  identifier: "PayoutBatch",
  description:
    "Many payouts of one user signed once: each valid item a normal payout (same pricing, rules and events, listed by `GET payouts`), each invalid one its error"
})
export type PayoutBatch = typeof PayoutBatch.Type

export const ConfirmPayoutBatchRequest = Schema.Struct({
  txHash: TxHash.annotate({
    description: "The hash of the transaction the user's wallet sent for the batch's `calls` (one hash for every item)"
  })
}).annotate({ identifier: "ConfirmPayoutBatchRequest" })
export type ConfirmPayoutBatchRequest = typeof ConfirmPayoutBatchRequest.Type

export const PayoutBatchSummary = Schema.Struct({
  batchId: PayoutBatchId,
  status: PayoutBatchStatus,
  userAddress: Schema.String,
  fromToken: FundingToken,
  itemCount: unnamed(Int, { description: "The items the batch was created with, valid or not" }),
  totals: PayoutBatchTotals,
  txHash: PayoutBatch.fields.txHash,
  createdAt: IsoTimestamp,
  expiresAt: IsoTimestamp
}).annotate({
  identifier: "PayoutBatchSummary",
  description:
    "A batch as its list shows it: its status (derived from its payouts as they are now) and exact totals, without its items; `GET payout-batches/{batchId}` gives every item"
})
export type PayoutBatchSummary = typeof PayoutBatchSummary.Type

export const PayoutBatchList = Schema.Struct({
  integrationId: IntegrationId,
  items: Schema.Array(PayoutBatchSummary),
  nextCursor: Schema.NullOr(Schema.String)
}).annotate({ identifier: "PayoutBatchList" })
export type PayoutBatchList = typeof PayoutBatchList.Type

export const ListPayoutBatchesParams = Schema.Struct({
  createdFrom: Schema.optionalKey(IsoTimestamp),
  createdTo: Schema.optionalKey(CreatedTo),
  limit: Schema.optionalKey(ListLimit),
  cursor: Schema.optionalKey(ListCursor)
})

const BatchIdParam = PrintableText.check(atMost(64)).annotate({
  description: "The batch's id (`pb_…`)",
  examples: ["pb_7QnR2xLd9Vw4KcP1sT8yZa"]
}).pipe(Schema.brand("PayoutBatchId"))

/** Batch payouts: many payouts of one user, one signature. */
export class PayoutBatchesGroup extends HttpApiGroup.make("payoutBatches")
  .add(
    HttpApiEndpoint.post("createPayoutBatch", "/payout-batches", {
      payload: CreatePayoutBatchRequest,
      headers: CreatePayoutHeaders,
      success: PayoutBatch.pipe(HttpApiSchema.status(201)),
      error: [
        ...groupErrors,
        IdempotencyKeyReusedError,
        NeedsKycError,
        MercadoCerradoError,
        RequoteError,
        ConflictError,
        ServiceUnavailableError,
        BadGatewayError
      ]
    })
      .annotate(OpenApi.Summary, "Create a batch of payouts, signed once")
      .annotate(
        OpenApi.Description,
        `Prepares up to ${MAX_BATCH_ITEMS} payouts from one KYC-approved user in USDC: each valid item becomes a normal payout (priced, verified and followed like one made by \`POST payouts\`, with its own deposit), each invalid item carries its error (the ErrorBody a payout would have answered) and makes nothing. \`calls\` holds every deposit transfer and one transfer of the summed service fee, for the wallet to sign once; \`totals\` are the exact sums of the payouts. The batch is refused as a whole only when no item is valid (400), the user's KYC is not approved (409 \`needs_kyc\`), the market is closed (409 \`mercado_cerrado\`), for \`fromToken: COPm\` (400) or when the provider cannot be reached (503: with the same \`Idempotency-Key\` a retry reaches the same payouts). Optional \`Idempotency-Key\`, as for payouts.`
      ),
    HttpApiEndpoint.post("confirmPayoutBatch", "/payout-batches/:batchId/confirm", {
      params: { batchId: BatchIdParam },
      payload: ConfirmPayoutBatchRequest,
      headers: MockScenarioHeaders,
      success: PayoutBatch,
      error: [...groupErrors, NotFoundError, TxHashReusedError, RequoteError, ConflictError, ServiceUnavailableError]
    })
      .annotate(OpenApi.Summary, "Confirm a batch of payouts with one transaction")
      .annotate(
        OpenApi.Description,
        "Reports the hash of the one transaction the user's wallet sent for the batch's `calls`. Live mode reads its receipt once and applies each payout's own rules to it: every item whose deposit transfer (from the user, USDC, to its deposit address) is there in full, mined inside its deposit window, moves to `deposit_confirmed` (each with its `payout.deposit_confirmed` event); an item whose transfer is missing or short stays `awaiting_deposit`, its `depositError` saying why. The service fees are verified from the same receipt (the summed fee transfer to the fee wallet). The batch then carries `txHash` and the event `payout_batch.confirmed` is sent. Confirming again with the same hash answers the batch as it is now, without reading the chain again; another hash after it is 409; a hash that confirms another payout, swap or batch is 409 `tx_hash_reused`; a transaction that pays none of the items is refused whole (409), the hash left free. Mock mode has no chain: every item awaiting its deposit is confirmed (the example hash stands for a transaction the mock chain mines for this batch), and the fee legs stay `pending` as a payout's do there without a fee transaction of its own."
      ),
    HttpApiEndpoint.get("listPayoutBatches", "/payout-batches", {
      query: ListPayoutBatchesParams,
      success: PayoutBatchList,
      error: [...groupErrors]
    })
      .annotate(OpenApi.Summary, "List batches of payouts")
      .annotate(
        OpenApi.Description,
        "This integration's batches, oldest first, each summed up (status and totals; its items through `GET payout-batches/{batchId}`); keyset pages (`limit`, default 50, at most 500; `nextCursor`), optionally within `[createdFrom, createdTo)`."
      ),
    HttpApiEndpoint.get("getPayoutBatch", "/payout-batches/:batchId", {
      params: { batchId: BatchIdParam },
      success: PayoutBatch,
      error: [...groupErrors, NotFoundError]
    })
      .annotate(OpenApi.Summary, "Get a batch of payouts")
      .annotate(
        OpenApi.Description,
        "One batch of this integration (another integration's is 404), each payout as it is now and the batch's `status` derived from them."
      )
  )
  .middleware(Authentication)
  .prefix("/api/integrations/breb")
  .annotate(OpenApi.Title, "Payout batches")
  .annotate(
    OpenApi.Description,
    "Many Bre-B payouts of one user prepared together and signed once (one EIP-5792 batch of every deposit and one fee transfer)."
  )
{}
