import { SqlClient } from "effect/sql"
import { BigDecimal, Duration, Effect, Option } from "effect"
import { now } from "../base/Clock.ts"
import { Chain } from "../chain/Chain.ts"
import { withVerifyPolicy } from "../chain/Verification.ts"
import { TxHashClaims } from "../chain/TxHashClaims.ts"
import { AppConfig } from "../config/Config.ts"
import { onOneReplica } from "../background/OneReplica.ts"
import { PayoutProvider, ProviderUnavailable } from "../provider/PayoutProvider.ts"
import { refundVerified } from "../payouts/Failure.ts"
import { Lifecycle, refundHops } from "../payouts/Lifecycle.ts"
import { type PickedPayout, PayoutRepo } from "../payouts/PayoutRepo.ts"
import type { PayoutRow } from "../payouts/PayoutRow.ts"
import { toBaseUnits } from "../money/index.ts"

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
  /** Refunds `sent` looked for onchain this run. */
  readonly refundsChecked: number
  /** Of those, refunds found onchain: now `verified`. */
  readonly refundsVerified: number
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
 * - looks onchain for refunds the provider says it `sent` (issue #29): a Transfer of the refund's amount of USDC to
 *   the user in its transaction, as deposits are verified. Found: the refund is `verified`, with its `refunded` hop,
 *   in one transaction. Not found (not mined, or not what the provider said): it stays `sent`, logged, and is looked
 *   for again on later runs, RECONCILE_BATCH_SIZE a run, least recently checked first.
 */
export const makeReconciler = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const config = yield* AppConfig
  const provider = yield* PayoutProvider
  const lifecycle = yield* Lifecycle
  const payouts = yield* PayoutRepo
  const claims = yield* TxHashClaims
  const chain = yield* Chain

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

  /** Looks for one payout's refund onchain; true when it is now `verified`. */
  const verifyRefund = (payout: PayoutRow) =>
    Effect.gen(function*() {
      const refund = payout.refund
      if (refund === null || refund === undefined || refund.txHash === null || refund.amount === null) return false
      const usdc = chain.token("USDC")
      const found = yield* withVerifyPolicy(chain.verifyRefund({
        token: usdc.address,
        txHash: refund.txHash,
        to: payout.user_address,
        amountBaseUnits: toBaseUnits(BigDecimal.fromStringUnsafe(refund.amount), usdc.decimals)
      })).pipe(
        Effect.tapError((error) =>
          Effect.logWarning("reconciler: a refund the provider sent is not verified onchain; looking again later", {
            payoutId: payout.id,
            txHash: refund.txHash,
            kind: error.kind,
            reason: error.reason
          })
        ),
        Effect.option
      )
      if (Option.isNone(found)) return false
      const source = found.value.simulated === true ? "mock_chain" : "chain"
      return yield* sql.withTransaction(Effect.gen(function*() {
        const locked = yield* payouts.lockById(payout.id)
        // Checked again under the lock: another run (or a webhook) may have moved it since it was picked.
        if (Option.isNone(locked) || locked.value.refund?.status !== "sent") return false
        if (locked.value.refund.txHash !== refund.txHash) return false
        const at = yield* now
        const next = { ...locked.value, refund: refundVerified(locked.value.refund, at), updated_at: at }
        yield* payouts.update(next, { source, after: refundHops(locked.value, next, at, source) })
        return true
      }))
    })

  const verifyRefunds = Effect.gen(function*() {
    const picked = yield* payouts.pickSentRefunds(yield* now, config.reconcileBatchSize).pipe(
      onOneReplica(sql, "payouts:refunds"),
      Effect.map(Option.getOrElse((): ReadonlyArray<PayoutRow> => []))
    )
    const outcomes = yield* Effect.forEach(picked, verifyRefund, { concurrency: PROVIDER_CONCURRENCY })
    return { refundsChecked: picked.length, refundsVerified: outcomes.filter(Boolean).length }
  })

  /** One run: stale claims, then one batch of payouts, then one batch of refunds sent. */
  const run: Effect.Effect<ReconcileReport, unknown> = Effect.gen(function*() {
    const releasedClaims = Option.getOrElse(
      yield* onOneReplica(sql, "tx-hash-claims:release")(releaseStaleClaims),
      () => 0
    )
    const picked = yield* pickStale
    const outcomes = yield* Effect.forEach(picked, reconcileOne, { concurrency: PROVIDER_CONCURRENCY })
    const refunds = yield* verifyRefunds
    const report: ReconcileReport = {
      releasedClaims,
      polled: picked.length,
      moved: outcomes.filter((outcome) => Option.isSome(outcome) && outcome.value).length,
      failed: outcomes.filter(Option.isNone).length,
      ...refunds
    }
    if (report.moved > 0 || report.failed > 0 || report.refundsChecked > 0) {
      yield* Effect.logInfo("reconciler: run finished", report)
    }
    return report
  })

  return { run, releaseStaleClaims, pickStale, verifyRefunds } as const
})
