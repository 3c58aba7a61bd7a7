import type { FeeLeg, PayoutReportRow, SwapReportRow } from "@cop-integrations/contracts"
import { maskBreBKey } from "../destinations/BreBKeyMask.ts"
import type { PayoutReportSource, SwapReportSource } from "./ReportRepo.ts"

const feeOf = (legs: ReadonlyArray<FeeLeg>, code: FeeLeg["code"]): string | null =>
  legs.find((leg) => leg.code === code)?.amountUsd ?? null

/** A payout as a report row: the contract's columns, amounts exactly as stored. */
export const payoutReportRow = (row: PayoutReportSource): PayoutReportRow => ({
  payoutId: row.id,
  createdAt: row.created_at.toISOString(),
  depositMinedAt: row.deposit_mined_at,
  completedAt: row.completed_at?.toISOString() ?? null,
  failedAt: row.failed_at,
  status: row.status,
  failureCode: row.failure_code,
  userAddress: row.user_address,
  fromToken: row.from_token,
  sourceAmount: row.source_amount,
  depositAmount: row.deposit_amount,
  serviceFee: row.service_fee,
  feeSwapUsd: feeOf(row.fee_legs, "swap"),
  feeBridgeFxUsd: feeOf(row.fee_legs, "bridge_fx"),
  feeBridgeUsd: feeOf(row.fee_legs, "bridge"),
  feeCopbyUsd: feeOf(row.fee_legs, "copby"),
  sellRate: row.sell_rate,
  effectiveRate: row.effective_usd_cop,
  destinationCop: row.destination_cop,
  copDelivered: row.total_received_cop,
  breBKey: maskBreBKey(row.bre_b_key),
  accountOwnerName: row.account_owner_name,
  txHash: row.tx_hash,
  feeTxHash: row.fee_tx_hash,
  refundStatus: row.refund_status,
  refundAmount: row.refund_amount,
  refundTxHash: row.refund_tx_hash,
  providerTransferId: row.provider_transfer_id,
  // The provider gives no reference of the rail today; the column is kept for when it does.
  railReference: null,
  batchId: row.batch_id,
  reference: row.reference
})

export const swapReportRow = (row: SwapReportSource): SwapReportRow => ({
  swapId: row.id,
  createdAt: row.created_at.toISOString(),
  updatedAt: row.updated_at.toISOString(),
  status: row.status,
  userAddress: row.user_address,
  fromToken: row.from_token,
  toToken: row.to_token,
  amountIn: row.amount_in,
  expectedAmountOut: row.expected_amount_out,
  minAmountOut: row.min_amount_out,
  slippageBps: String(row.slippage_bps),
  feeSwapUsd: feeOf(row.fee_legs, "swap"),
  txHash: row.tx_hash
})

/**
 * What a spreadsheet reads as the start of a formula (OWASP's CSV injection list, with the full-width forms some
 * spreadsheets also take). The service's own values never start so (amounts are never negative); text a partner
 * supplied (a name, a reference) may.
 */
const FORMULA_START = /^[=+\-@\t\r\n＝＋－＠]/

/** The cell as a spreadsheet shows it without running it: a formula's first character is preceded by `'`. */
export const spreadsheetSafe = (cell: string): string => (FORMULA_START.test(cell) ? `'${cell}` : cell)

/** A row's CSV cells in the columns' order: null an empty cell, every cell spreadsheet-safe. */
export const csvCells = <Column extends string>(
  columns: ReadonlyArray<Column>,
  row: Readonly<Record<Column, string | null>>
): ReadonlyArray<string> =>
  columns.map((column) => {
    const value = row[column]
    return value === null ? "" : spreadsheetSafe(value)
  })
