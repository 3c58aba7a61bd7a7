import {
  FAILURE_CODES,
  type KnownFailureCode,
  type PayoutFailure,
  type PayoutRefund,
  type PayoutStatus,
  type RefundStatus
} from "@cop-integrations/contracts"
import { BigDecimal, Option } from "effect"
import { parsePlainDecimal } from "../money/index.ts"
import type { ProviderRefund } from "../provider/TransferProgress.ts"
import type { PayoutRow } from "./PayoutRow.ts"

/** USDC has 6 decimals; a refund amount with more is not one the chain can move. */
const USDC_DECIMALS = 6

/** A failure as partners see it: the code's row of the documented table, and when it happened. */
export const failureOf = (code: KnownFailureCode, at: Date): PayoutFailure => {
  const { category, message, retryable } = FAILURE_CODES[code]
  return { code, category, retryable, message, at: at.toISOString() }
}

/** The statuses that carry a failure. */
export const isFailureStatus = (status: PayoutStatus) => status === "failed" || status === "refunded"

const RANK: Record<RefundStatus, number> = { pending: 0, sent: 1, verified: 2 }

/** What the provider kept of the deposit: the deposit less what comes back (null while the amount is unknown). */
const retainedOf = (deposit: string, amount: string | null): string | null => {
  if (amount === null) return null
  const [paid, back] = [parsePlainDecimal(deposit, USDC_DECIMALS), parsePlainDecimal(amount, USDC_DECIMALS)]
  if (Option.isNone(paid) || Option.isNone(back)) return null
  const kept = BigDecimal.subtract(paid.value, back.value)
  return BigDecimal.isNegative(kept) ? "0" : BigDecimal.format(BigDecimal.normalize(kept))
}

/**
 * The payout's refund after the provider's word on it, or none when that word changes nothing. A refund only moves
 * forward (pending → sent → verified); `sent` once the provider names its transaction. The amount, once said, stays.
 */
export const refundAfter = (row: PayoutRow, report: ProviderRefund, at: Date): Option.Option<PayoutRefund> => {
  const current = row.refund ?? null
  const status: RefundStatus = report.txHash === null ? "pending" : "sent"
  const amount = current?.amount ?? report.amount
  const txHash = current?.txHash ?? report.txHash
  if (current !== null && RANK[status] <= RANK[current.status] && amount === current.amount) return Option.none()
  return Option.some({
    status: current !== null && RANK[current.status] > RANK[status] ? current.status : status,
    to: row.user_address,
    token: "USDC",
    amount,
    retained: retainedOf(row.deposit_amount, amount),
    txHash,
    at: at.toISOString()
  })
}

/** The refund once its transaction was seen onchain moving its amount to the user (the reconciler looks). */
export const refundVerified = (refund: PayoutRefund, at: Date): PayoutRefund => ({
  ...refund,
  status: "verified",
  at: at.toISOString()
})
