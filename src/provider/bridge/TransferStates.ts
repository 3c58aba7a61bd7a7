import type { PayoutStatus } from "@cop-integrations/contracts"
import type { ProviderRefund, TransferProgress } from "../TransferProgress.ts"
import { failureCodeOf } from "./ReturnReasons.ts"

/**
 * Bridge's transfer states with a payout meaning: the status each moves a payout to, and whether it comes only after
 * the funds reached the provider (its own progress, and a delivery that failed or was sent back: undeliverable,
 * returned, refunded, missing return policy, there was money to return). Not `canceled` (a transfer closed for want
 * of funds) or `error`; `awaiting_funds`, `in_review` and states we do not know mean nothing here.
 */
const TRANSFER_STATES: ReadonlyMap<string, { readonly status: PayoutStatus; readonly fundsArrived: boolean }> = new Map(
  [
    ["funds_received", { status: "deposit_confirmed", fundsArrived: true }],
    ["payment_submitted", { status: "processing", fundsArrived: true }],
    ["payment_processed", { status: "completed", fundsArrived: true }],
    ["undeliverable", { status: "failed", fundsArrived: true }],
    ["missing_return_policy", { status: "failed", fundsArrived: true }],
    ["error", { status: "failed", fundsArrived: false }],
    ["canceled", { status: "failed", fundsArrived: false }],
    ["returned", { status: "refunded", fundsArrived: true }],
    ["refunded", { status: "refunded", fundsArrived: true }]
  ]
)

/** States in which Bridge returns, or has returned, the deposit to its sender (the refund_to_sender policy). */
const RETURNING = new Set(["returned", "refunded"])

/**
 * A Bridge transfer in payout terms: its id, its state, its receipt's `final_amount` when it has one, why it was
 * returned (`return_details.reason`) and the refund it sent back (`refund`: amount and transaction), when it says.
 */
export const bridgeProgress = (transfer: {
  readonly id: string
  readonly state: string
  readonly finalAmount?: string | null | undefined
  readonly returnReason?: string | null | undefined
  readonly refund?: ProviderRefund | null | undefined
}): TransferProgress => {
  const meaning = TRANSFER_STATES.get(transfer.state)
  return {
    transferId: transfer.id,
    status: meaning?.status ?? null,
    fundsArrived: meaning?.fundsArrived ?? false,
    finalAmountCop: transfer.finalAmount ?? null,
    failureCode: failureCodeOf(transfer.state, transfer.returnReason),
    refund: RETURNING.has(transfer.state) ? (transfer.refund ?? { amount: null, txHash: null }) : null
  }
}
