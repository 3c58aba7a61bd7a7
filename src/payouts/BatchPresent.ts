import {
  ErrorBody,
  FundingToken,
  IntegrationId,
  type PayoutBatch,
  PayoutBatchId,
  type PayoutBatchStatus,
  PayoutBatchTotals,
  PayoutId,
  type PayoutStatus,
  type PayoutBatchSummary,
  PreparedTx,
  TxHash,
  UserAddress
} from "@cop-integrations/contracts"
import { type Option, Schema } from "effect"
import { sumFixed } from "../money/index.ts"
import type { PayoutRow } from "./PayoutRow.ts"
import { presentPayout, walletSendCalls } from "./Present.ts"

/** One item of a batch as stored: its place, its reference, and the payout made for it or why none was. */
export const BatchItemRecord = Schema.Struct({
  index: Schema.Number,
  reference: Schema.NullOr(Schema.String),
  payoutId: Schema.NullOr(PayoutId),
  error: Schema.NullOr(ErrorBody),
  /** Why the batch's confirm did not take the item's payout (written by the confirm; absent before it). */
  depositError: Schema.optionalKey(Schema.NullOr(ErrorBody))
})
export type BatchItemRecord = typeof BatchItemRecord.Type

export const BatchRow = Schema.Struct({
  id: PayoutBatchId,
  integration_id: IntegrationId,
  user_address: UserAddress,
  from_token: FundingToken,
  items: Schema.Array(BatchItemRecord),
  totals: PayoutBatchTotals,
  fee_transaction: PreparedTx,
  tx_hash: Schema.NullOr(TxHash),
  created_at: Schema.Date,
  updated_at: Schema.Date,
  expires_at: Schema.Date,
  finished_at: Schema.NullOr(Schema.Date)
})
export type BatchRow = typeof BatchRow.Type

const FUNDED: ReadonlySet<PayoutStatus> = new Set([
  "deposit_confirmed",
  "processing",
  "completed",
  "failed",
  "refunded"
])
const FINISHED: ReadonlySet<PayoutStatus> = new Set(["completed", "failed", "refunded", "expired"])

/** A payout that will not move again on its own (an expired one moves only if its deposit turns up late). */
export const isFinished = (status: PayoutStatus) => FINISHED.has(status)

/** A batch's status, from its payouts' (PayoutBatchStatus says what each means). */
export const batchStatus = (statuses: ReadonlyArray<PayoutStatus>): PayoutBatchStatus => {
  const funded = statuses.filter((status) => FUNDED.has(status)).length
  if (statuses.every((status) => status === "completed")) return "completed"
  if (statuses.every((status) => FINISHED.has(status))) return funded === 0 ? "expired" : "completed_with_failures"
  if (funded === 0) return "prepared"
  return statuses.some((status) => status === "awaiting_deposit") ? "partially_confirmed" : "confirmed"
}

/**
 * The exact sums of the payouts' amounts, each at the scale its parts are written in: USDC's `decimals` for what the
 * user pays, the deposits and the fees (a batch is paid in USDC), 2 for COP.
 */
export const batchTotals = (rows: ReadonlyArray<PayoutRow>, usdcDecimals: number): PayoutBatchTotals => ({
  count: rows.length,
  sourceAmount: sumFixed(rows.map((row) => row.source_amount ?? row.total_paid), usdcDecimals),
  depositAmount: sumFixed(rows.map((row) => row.deposit_amount), usdcDecimals),
  serviceFee: sumFixed(rows.map((row) => row.service_fee), usdcDecimals),
  destinationCop: sumFixed(rows.map((row) => row.destination_cop), 2)
})

/**
 * The batch as partners see it: each item with its payout as it is now (or its error), the status derived from them,
 * and `calls`: every deposit, in the items' order, and the one fee transfer.
 */
export const presentBatch = (
  batch: BatchRow,
  payouts: ReadonlyArray<PayoutRow>,
  chainId: Option.Option<number>
): PayoutBatch => {
  const byId = new Map(payouts.map((row) => [row.id, row]))
  const rowOf = (item: BatchItemRecord) => (item.payoutId === null ? undefined : byId.get(item.payoutId))
  const made = batch.items.flatMap((item) => {
    const row = rowOf(item)
    return row === undefined ? [] : [row]
  })
  return {
    batchId: batch.id,
    status: batchStatus(made.map((row) => row.status)),
    userAddress: batch.user_address,
    fromToken: batch.from_token,
    items: batch.items.map((item) => {
      const row = rowOf(item)
      return {
        index: item.index,
        reference: item.reference,
        payout: row === undefined ? null : presentPayout(row, chainId),
        error: item.error,
        depositError: item.depositError ?? null
      }
    }),
    totals: batch.totals,
    feeTransaction: batch.fee_transaction,
    calls: walletSendCalls(batch.user_address, [...made.map((row) => row.transaction), batch.fee_transaction], chainId),
    txHash: batch.tx_hash,
    createdAt: batch.created_at.toISOString(),
    expiresAt: batch.expires_at.toISOString()
  }
}

/** The batch as its list shows it: status from its payouts' statuses, totals, no items. */
export const summarizeBatch = (batch: BatchRow, statuses: ReadonlyArray<PayoutStatus>): PayoutBatchSummary => ({
  batchId: batch.id,
  status: batchStatus(statuses),
  userAddress: batch.user_address,
  fromToken: batch.from_token,
  itemCount: batch.items.length,
  totals: batch.totals,
  txHash: batch.tx_hash,
  createdAt: batch.created_at.toISOString(),
  expiresAt: batch.expires_at.toISOString()
})
