import type { FeeLeg, PayoutStatus } from "@cop-integrations/contracts"
import { Effect, Option } from "effect"
import { now } from "../Clock.ts"
import { PayoutRepo } from "./PayoutRepo.ts"
import type { PayoutRow } from "./PayoutRow.ts"

/** Transitions only move forward; anything else (a late or duplicated event) is ignored. */
const allowedNext: Record<PayoutStatus, ReadonlyArray<PayoutStatus>> = {
  awaiting_deposit: ["deposit_confirmed", "processing", "completed", "expired", "failed"],
  deposit_confirmed: ["processing", "completed", "failed", "refunded"],
  processing: ["completed", "failed", "refunded"],
  failed: ["refunded"],
  completed: [],
  expired: [],
  refunded: []
}

export const canMove = (from: PayoutStatus, to: PayoutStatus) => allowedNext[from].includes(to)

/** Provider (Bridge) transfer states → payout status; states with no payout meaning map to none. */
export const statusForTransferState = (state: string): Option.Option<PayoutStatus> => {
  switch (state) {
    case "funds_received":
      return Option.some("deposit_confirmed")
    case "payment_submitted":
      return Option.some("processing")
    case "payment_processed":
      return Option.some("completed")
    case "undeliverable":
    case "error":
    case "canceled":
    case "missing_return_policy":
      return Option.some("failed")
    case "returned":
    case "refunded":
      return Option.some("refunded")
    default:
      return Option.none()
  }
}

const settleProviderLegs = (legs: ReadonlyArray<FeeLeg>): ReadonlyArray<FeeLeg> =>
  legs.map((leg) => (leg.code === "copby" ? leg : { ...leg, status: "verified" }))

export const moveTo = (row: PayoutRow, status: PayoutStatus, at: Date): PayoutRow => ({
  ...row,
  status,
  updated_at: at,
  completed_at: status === "completed" ? at : row.completed_at,
  fee_legs: status === "completed" ? settleProviderLegs(row.fee_legs) : row.fee_legs
})

/**
 * The one place a payout's status changes after confirmation: provider webhooks and the mock
 * lifecycle both come through here. Call inside a transaction (the row is locked).
 */
export class Lifecycle extends Effect.Service<Lifecycle>()("Lifecycle", {
  effect: Effect.gen(function*() {
    const payouts = yield* PayoutRepo

    const applyTransferState = (input: { readonly transferId: string; readonly state: string }) =>
      Effect.gen(function*() {
        const target = statusForTransferState(input.state)
        if (Option.isNone(target)) return false
        const found = yield* payouts.lockByTransfer(input.transferId)
        if (Option.isNone(found) || !canMove(found.value.status, target.value)) return false
        yield* payouts.update(moveTo(found.value, target.value, yield* now))
        return true
      })

    return { applyTransferState } as const
  })
}) {}
