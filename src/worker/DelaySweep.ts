import { SqlClient } from "effect/sql"
import { Effect, Option } from "effect"
import { now } from "../base/Clock.ts"
import { AppConfig } from "../config/Config.ts"
import { PayoutRepo } from "../payouts/PayoutRepo.ts"
import { onOneReplica } from "../background/OneReplica.ts"

/**
 * Stuck payouts made visible (issue #22): a payout in deposit_confirmed or processing that has not changed for
 * PAYOUT_DELAYED_AFTER_MINUTES gets its `delayed` hop and one `payout.delayed` event, once in its life (marked
 * `delayed_at`, in the same transaction). Not a payout awaiting its deposit: waiting for the user is not the service
 * being stuck, and its deposit window closes it anyway; not a finished one (completed, failed, refunded, expired).
 * One replica at a time, one batch a round; answers how many it reported (0 when another replica had the round).
 */
export const makeDelaySweep = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const config = yield* AppConfig
  const payouts = yield* PayoutRepo
  return Effect.gen(function*() {
    const at = yield* now
    return yield* payouts.markDelayed(at, new Date(at.getTime() - config.payoutDelayedAfterMinutes * 60_000))
  }).pipe(onOneReplica(sql, "payouts:delay-sweep"), Effect.map(Option.getOrElse(() => 0)))
})
