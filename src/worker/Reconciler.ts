import { SqlClient } from "effect/sql"
import { Duration, Effect, Option } from "effect"
import { now } from "../base/Clock.ts"
import { TxHashClaims } from "../chain/TxHashClaims.ts"
import { AppConfig } from "../config/Config.ts"
import { onOneReplica } from "../work/OneReplica.ts"
import { PayoutProvider, ProviderUnavailable } from "../provider/PayoutProvider.ts"
import { Lifecycle } from "../payouts/Lifecycle.ts"
import { type PickedPayout, PayoutRepo } from "../payouts/PayoutRepo.ts"

/** The longest the reconciler waits for the provider's answer about one transfer. */
const PROVIDER_ANSWER_TIMEOUT = Duration.seconds(30)
/** Transfers asked about at once. */
const PROVIDER_CONCURRENCY = 4

export interface ReconcileReport {
  /** `verifying` txHash claims released (their confirm crashed between the claim and the chain check). */
  readonly releasedClaims: number
  /** Payouts whose transfer the provider was asked about. */
  readonly polled: number
  /** Of those, payouts the provider's answer moved forward. */
  readonly moved: number
  /** Of those, payouts the provider could not tell about (logged, asked again on a later run). */
  readonly failed: number
}

/**
 * Finishes what a crash or a lost webhook left behind (issue #7):
 * - releases txHash claims still `verifying` after RECONCILE_CLAIM_STALE_AFTER_MS, so the partner can confirm again;
 * - asks the provider about payouts still `awaiting_deposit`, `deposit_confirmed` or `processing`, and about payouts
 *   `expired` less than RECONCILE_EXPIRED_FOR_MS ago (funds that arrive late, DESIGN §3: the provider may still
 *   report the deposit), that nothing has updated (or asked about) for RECONCILE_STALE_AFTER_MS, oldest first, at
 *   most RECONCILE_BATCH_SIZE a run, and applies the transfer's progress through `Lifecycle.applyTransferProgress`, as a
 *   webhook would (its reported COP amount included).
 * One replica picks a batch at a time (and stamps `reconciled_at`, so the next run takes the next ones); the
 * provider is asked outside any transaction, and each answer is applied in its own short transaction. A provider
 * failure is logged and skipped.
 */
export const makeReconciler = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const config = yield* AppConfig
  const provider = yield* PayoutProvider
  const lifecycle = yield* Lifecycle
  const payouts = yield* PayoutRepo
  const claims = yield* TxHashClaims

  const releaseStaleClaims = Effect.gen(function*() {
    const cutoff = new Date((yield* now).getTime() - config.reconcileClaimStaleAfterMs)
    const released = yield* claims.releaseStale(cutoff)
    for (const claim of released) {
      yield* Effect.logWarning("reconciler: released a txHash claim left verifying", {
        txHash: claim.tx_hash,
        resourceKind: claim.resource_kind,
        resourceId: claim.resource_id
      })
    }
    return released.length
  })

  const pickStale = Effect.gen(function*() {
    const at = yield* now
    const cutoff = new Date(at.getTime() - config.reconcileStaleAfterMs)
    const expiredSince = new Date(at.getTime() - config.reconcileExpiredForMs)
    return yield* payouts.pickStale({ at, cutoff, expiredSince, limit: config.reconcileBatchSize }).pipe(
      onOneReplica(sql, "payouts:reconcile"),
      Effect.map(Option.getOrElse(() => []))
    )
  })

  /** Asks the provider about one payout's transfer and applies the answer; Some(moved), or None when it could not. */
  const reconcileOne = (payout: PickedPayout) =>
    provider.getTransfer(payout.provider_transfer_id).pipe(
      Effect.timeoutOrElse({
        duration: PROVIDER_ANSWER_TIMEOUT,
        orElse: () =>
          Effect.fail(
            new ProviderUnavailable({ reason: `no answer within ${Duration.format(PROVIDER_ANSWER_TIMEOUT)}` })
          )
      }),
      Effect.flatMap((progress) =>
        sql.withTransaction(lifecycle.applyTransferProgress({ progress, source: "reconciler" }))
      ),
      Effect.map(Option.some),
      Effect.catchTags({
        ProviderUnavailable: (error) => Effect.as(warnSkipped(payout, error.reason), Option.none()),
        ProviderBadResponse: (error) => Effect.as(warnSkipped(payout, error.reason), Option.none())
      })
    )

  const warnSkipped = (payout: PickedPayout, reason: string) =>
    Effect.logWarning("reconciler: the provider could not tell a transfer's state; asking again later", {
      payoutId: payout.id,
      transferId: payout.provider_transfer_id,
      reason
    })

  /** One run: stale claims, then one batch of payouts. */
  const run: Effect.Effect<ReconcileReport, unknown> = Effect.gen(function*() {
    const releasedClaims = Option.getOrElse(
      yield* onOneReplica(sql, "tx-hash-claims:release")(releaseStaleClaims),
      () => 0
    )
    const picked = yield* pickStale
    const outcomes = yield* Effect.forEach(picked, reconcileOne, { concurrency: PROVIDER_CONCURRENCY })
    const report: ReconcileReport = {
      releasedClaims,
      polled: picked.length,
      moved: outcomes.filter((outcome) => Option.isSome(outcome) && outcome.value).length,
      failed: outcomes.filter(Option.isNone).length
    }
    if (report.moved > 0 || report.failed > 0) yield* Effect.logInfo("reconciler: run finished", report)
    return report
  })

  return { run, releaseStaleClaims, pickStale } as const
})
