import type { FeeLeg, PayoutStatus, PayoutTimelineHop, PayoutTimelineSource, TxHash } from "@cop-integrations/contracts"
import { Context, Effect, Layer, Option } from "effect"
import { now } from "../base/Clock.ts"
import { hop, PayoutRepo } from "./PayoutRepo.ts"
import type { TransferProgress } from "../provider/TransferProgress.ts"
import { failureOf, isFailureStatus, refundAfter } from "./Failure.ts"
import type { PayoutRow } from "./PayoutRow.ts"
import { normalizeCop } from "./TotalReceived.ts"

/**
 * Transitions only move forward; anything else (a late or duplicated event) is ignored. `expired` closes the
 * partner's window, not the money's: its one way out is the deposit arriving late (DESIGN §3, "Funds that arrive
 * late"), and from there the payout goes on like any other.
 */
const allowedNext: Record<PayoutStatus, ReadonlyArray<PayoutStatus>> = {
  awaiting_deposit: ["deposit_confirmed", "expired", "failed"],
  deposit_confirmed: ["processing", "completed", "failed", "refunded"],
  processing: ["completed", "failed", "refunded"],
  failed: ["refunded"],
  completed: [],
  expired: ["deposit_confirmed"],
  refunded: []
}

export const canMove = (from: PayoutStatus, to: PayoutStatus) => allowedNext[from].includes(to)

/** Statuses that mean the deposit has reached the provider. */
const depositArrived = (status: PayoutStatus) =>
  status === "deposit_confirmed" || status === "processing" || status === "completed"

/**
 * The statuses a payout passes through to reach `to` (empty: `to` is not forward). The provider detects
 * deposits itself, and its word that the funds arrived is authoritative: a payout still awaiting its deposit
 * is first `deposit_confirmed`, then moves on to the provider's later state. An expired payout always passes
 * `deposit_confirmed` (its only way out), whatever the provider's later state.
 */
export const stepsTo = (from: PayoutStatus, to: PayoutStatus): ReadonlyArray<PayoutStatus> => {
  if (from === "awaiting_deposit" && to !== "deposit_confirmed" && depositArrived(to)) return ["deposit_confirmed", to]
  if (from === "expired" && to !== "deposit_confirmed") {
    return canMove("deposit_confirmed", to)
      ? ["deposit_confirmed", to]
      : []
  }
  return canMove(from, to) ? [to] : []
}

/**
 * The statuses a provider transfer's progress moves a payout through (empty: it does not move it). An expired payout
 * moves only on the provider's word that money reached it: a transfer that never saw funds leaves it expired. A payout
 * the partner canceled (`canceled`) is not paid out: funds that reached the provider after the cancel go straight to
 * `failed` or `refunded` as the provider returns them (never through `deposit_confirmed`).
 */
export const stepsForProgress = (
  from: PayoutStatus,
  progress: TransferProgress,
  canceled = false
): ReadonlyArray<PayoutStatus> => {
  if (progress.status === null || (from === "expired" && !progress.fundsArrived)) return []
  if (canceled && from === "expired" && (progress.status === "failed" || progress.status === "refunded")) {
    return [progress.status]
  }
  return stepsTo(from, progress.status)
}

/** Once the deposit is in, the legs still `quoted` wait for settlement (`pending`). */
const awaitSettlement = (legs: ReadonlyArray<FeeLeg>): ReadonlyArray<FeeLeg> =>
  legs.map((leg) => (leg.status === "quoted" ? { ...leg, status: "pending" } : leg))

const settleProviderLegs = (legs: ReadonlyArray<FeeLeg>): ReadonlyArray<FeeLeg> =>
  legs.map((leg) => (leg.code === "copby" ? leg : { ...leg, status: "verified" }))

export const moveTo = (row: PayoutRow, status: PayoutStatus, at: Date): PayoutRow => ({
  ...row,
  status,
  updated_at: at,
  completed_at: status === "completed" ? at : row.completed_at,
  fee_legs: status === "completed"
    ? settleProviderLegs(row.fee_legs)
    : status === "deposit_confirmed"
    ? awaitSettlement(row.fee_legs)
    : row.fee_legs
})

/**
 * Whether the partner may still confirm this payout: while it awaits its deposit, or when the provider
 * reported the deposit before the partner confirmed it (any later status; the confirm records the txHash).
 * An `expired` payout is still heard: its deposit may have been mined in time (see `minedInWindow`).
 */
export const acceptsConfirm = (row: PayoutRow, depositSeenByProvider: boolean) =>
  row.status === "awaiting_deposit" || row.status === "expired" || depositSeenByProvider

/** A deposit mined before `expiresAt` counts, however late it is confirmed (DESIGN §3, deposit window). */
export const minedInWindow = (row: PayoutRow, minedAt: Date) => minedAt.getTime() < row.expires_at.getTime()

/**
 * The partner's confirm, once its txHash is claimed and verified: records the hashes, and moves a payout
 * still awaiting its deposit to `deposit_confirmed`. A payout the provider already moved on keeps its status
 * and its settled legs (an expired one it moved forward included). The partner's own move out of `expired`: the
 * sweep closed the window, but the deposit was mined inside it, so the payout goes on as if confirmed in time.
 */
export const confirmByPartner = (row: PayoutRow, input: {
  readonly txHash: TxHash
  readonly feeTxHash: TxHash | null
  readonly feeStatus: "pending" | "verified"
  readonly minedAt: Date
  readonly at: Date
}): PayoutRow => ({
  ...row,
  status: row.status === "awaiting_deposit" || (row.status === "expired" && minedInWindow(row, input.minedAt))
    ? "deposit_confirmed"
    : row.status,
  tx_hash: input.txHash,
  fee_tx_hash: input.feeTxHash,
  updated_at: input.at,
  fee_legs: row.fee_legs.map((leg) =>
    leg.code === "copby"
      ? { ...leg, status: input.feeStatus }
      : leg.status === "verified"
      ? leg
      : { ...leg, status: "pending" }
  )
})

/**
 * The failure a move to `failed` or `refunded` records, once: funds that arrived after the partner canceled are
 * `deposit_after_cancel` whatever the provider says; otherwise the provider's reason (`other` when it gave none).
 */
const withFailure = (row: PayoutRow, progress: TransferProgress, at: Date): PayoutRow => {
  if (!isFailureStatus(row.status) || (row.failure ?? null) !== null) return row
  const canceled = (row.canceled_at ?? null) !== null && progress.fundsArrived
  return { ...row, failure: failureOf(canceled ? "deposit_after_cancel" : progress.failureCode ?? "other", at) }
}

/** The refund the provider reports, for a payout being refunded (none when it reports none or nothing changes). */
const refundOf = (row: PayoutRow, progress: TransferProgress, at: Date) =>
  progress.refund === null ? Option.none() : refundAfter(row, progress.refund, at)

const withRefund = (row: PayoutRow, progress: TransferProgress, at: Date): PayoutRow =>
  row.status !== "refunded" ? row : Option.match(refundOf(row, progress, at), {
    onNone: () => row,
    onSome: (refund) => ({ ...row, refund })
  })

/** A `refunded` hop for a refund that became `sent` or `verified` (a refund only `pending` has none of its own). */
export const refundHops = (
  before: PayoutRow,
  after: PayoutRow,
  at: Date,
  source: PayoutTimelineSource
): ReadonlyArray<PayoutTimelineHop> => {
  const status = after.refund?.status
  if (status === undefined || status === "pending" || status === before.refund?.status) return []
  return [{ ...hop("refunded", at, source), refundStatus: status }]
}

/**
 * The one place a payout's status changes after confirmation: provider webhooks and the mock
 * lifecycle both come through here. Call inside a transaction (the row is locked).
 */
export class Lifecycle extends Context.Service<Lifecycle>()("Lifecycle", {
  make: Effect.gen(function*() {
    const payouts = yield* PayoutRepo

    /** The reported COP amount, normalised to 2 decimals; none when absent or unreadable (logged, without its text). */
    const reportedTotal = (progress: TransferProgress) => {
      const text = progress.finalAmountCop
      if (text === null) return Effect.succeed(Option.none<string>())
      const total = normalizeCop(text)
      return Option.isSome(total) ? Effect.succeed(total) : Effect.as(
        Effect.logWarning("provider transfer: final_amount is not a COP amount; ignored").pipe(
          Effect.annotateLogs({ transferId: progress.transferId })
        ),
        Option.none<string>()
      )
    }

    /**
     * The provider's report of a transfer's progress. Its COP amount (`finalAmountCop`) is recorded with a report that
     * moves the payout, or when none is recorded yet (a late or duplicated report does not replace it); an
     * unreadable amount is logged and ignored. The first report that the funds reached the provider adds the
     * `funds_received` hop (before the status it moves to), also when a payout the partner confirmed first does not
     * move. `source`: who reported it (the timeline's source). True when the payout changed.
     */
    const applyTransferProgress = (
      input: { readonly progress: TransferProgress; readonly source: PayoutTimelineSource }
    ) =>
      Effect.gen(function*() {
        const { progress, source } = input
        const reported = yield* reportedTotal(progress)
        if (progress.status === null && Option.isNone(reported)) return false
        const found = yield* payouts.lockByTransfer(progress.transferId)
        if (Option.isNone(found)) return false
        const canceled = (found.value.canceled_at ?? null) !== null
        const steps = stepsForProgress(found.value.status, progress, canceled)
        const recordTotal = Option.isSome(reported) &&
          (steps.length > 0 || (found.value.total_received_cop ?? null) === null)
        // A payout that moves, or one the partner confirmed first; not a late duplicate for a payout long finished.
        const fundsNewlyReceived = progress.fundsArrived &&
          (steps.length > 0 || found.value.status === "deposit_confirmed") &&
          !found.value.timeline.some((hop) => hop.status === "funds_received")
        const at = yield* now
        const refundMoves = found.value.status === "refunded" && Option.isSome(refundOf(found.value, progress, at))
        if (steps.length === 0 && !recordTotal && !fundsNewlyReceived && !refundMoves) return false
        // The provider's word that the deposit arrived: recorded once (the moment of a late deposit stays known).
        if (steps.includes("deposit_confirmed")) yield* payouts.markDepositSeen(found.value.id, at)
        if (found.value.status === "expired" && steps.length > 0) {
          const message = canceled
            ? "provider reported funds for a canceled payout: they are returned, not paid out"
            : "provider reported funds for an expired payout: it moves forward (late deposit)"
          yield* Effect.logInfo(message).pipe(
            Effect.annotateLogs({ payoutId: found.value.id, transferId: progress.transferId, status: progress.status })
          )
        }
        let row = recordTotal ? { ...found.value, total_received_cop: Option.getOrNull(reported) } : found.value
        let hops = fundsNewlyReceived ? [hop("funds_received", at, source)] : []
        if (steps.length === 0) {
          const next = { ...withRefund(row, progress, at), updated_at: at }
          yield* payouts.update(next, { source, hops, after: refundHops(row, next, at, source) })
        }
        for (const step of steps) {
          const next = withRefund(withFailure(moveTo(row, step, at), progress, at), progress, at)
          row = yield* payouts.update(next, { source, hops, after: refundHops(row, next, at, source) })
          hops = []
        }
        return true
      })

    return { applyTransferProgress } as const
  })
}) {
  static readonly Default = Layer.effect(this, this.make)
}
