/**
 * A payout's statuses and the documented moves between them (README, "Payout lifecycle and provider events"): what
 * the kit holds a deployment to when a payout is read twice. The kit states the rule itself; it imports no service.
 */
import type { Payout } from "@cop-integrations/contracts"

export type PayoutStatus = Payout["status"]

/** Each status and the ones it may go to next. */
const NEXT: Record<PayoutStatus, ReadonlyArray<PayoutStatus>> = {
  awaiting_deposit: ["deposit_confirmed", "expired", "failed"],
  deposit_confirmed: ["processing", "completed", "failed", "refunded"],
  processing: ["completed", "failed", "refunded"],
  failed: ["refunded"],
  completed: [],
  // funds that arrive late (through deposit_confirmed), or that the provider returns after a cancel
  expired: ["deposit_confirmed", "failed", "refunded"],
  refunded: []
}

/** Whether `to` lies ahead of `from` (one move or several). */
export const ahead = (from: PayoutStatus, to: PayoutStatus, seen: Set<PayoutStatus> = new Set()): boolean =>
  NEXT[from].some((next) => next === to || (!seen.has(next) && ahead(next, to, seen.add(next))))

/** Whether a text is one of the statuses. */
export const isPayoutStatus = (text: string): text is PayoutStatus => Object.hasOwn(NEXT, text)
