import { SqlClient } from "effect/sql"
import { Effect, Option } from "effect"
import { now } from "../base/Clock.ts"
import { AppConfig } from "../config/Config.ts"
import { onOneReplica } from "../background/OneReplica.ts"
import { makeRetentionRepo } from "./RetentionRepo.ts"

/** Rows deleted per statement, each batch its own short transaction. */
export const HOUSEKEEPING_BATCH = 5000
const DAY_MS = 24 * 60 * 60 * 1000

/**
 * Retention, one replica at a time. Deleted once past their retention (counted from when they stopped
 * mattering): expired quotes and OTP challenges and finished (done or dead) jobs after RETENTION_DAYS, provider
 * webhook events (kept for de-duplication) after WEBHOOK_EVENT_RETENTION_DAYS, partner events and their deliveries after
 * RETENTION_DAYS, dashboard sign-in links and sessions RETENTION_DAYS after they expired, request logs after
 * REQUEST_LOG_RETENTION_DAYS. Never a quote or OTP still valid
 * or inside the 24 h OTP send window (retention is at least a day), never an unfinished job. Idempotency-Keys left
 * `started` by a request that died are freed after 24 h (the provider keeps its idempotency keys that long).
 */
export const makeHousekeeping = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const config = yield* AppConfig
  const retention = yield* makeRetentionRepo

  /** Deletes batch after batch until one comes back short. */
  const purge = <E>(deleteBatch: (limit: number) => Effect.Effect<number, E>) =>
    Effect.gen(function*() {
      let deleted = HOUSEKEEPING_BATCH
      while (deleted === HOUSEKEEPING_BATCH) {
        deleted = yield* deleteBatch(HOUSEKEEPING_BATCH).pipe(
          onOneReplica(sql, "housekeeping"),
          Effect.map(Option.getOrElse(() => 0))
        )
      }
    })

  return Effect.gen(function*() {
    const at = yield* now
    const cutoff = new Date(at.getTime() - config.retentionDays * DAY_MS)
    const eventCutoff = new Date(at.getTime() - config.webhookEventRetentionDays * DAY_MS)
    yield* purge(retention.quotesExpiredBefore(cutoff))
    yield* purge(retention.otpChallengesExpiredBefore(cutoff))
    yield* purge(retention.jobsFinishedBefore(cutoff))
    yield* purge(retention.providerEventsReceivedBefore(eventCutoff))
    yield* purge(retention.partnerEventsCreatedBefore(cutoff))
    yield* purge(retention.dashboardLinksExpiredBefore(cutoff))
    yield* purge(retention.dashboardSessionsExpiredBefore(cutoff))
    yield* purge(retention.requestLogsBefore(new Date(at.getTime() - config.requestLogRetentionDays * DAY_MS)))
    // An Idempotency-Key whose request died before finishing, once the provider has forgotten its own key (24 h).
    yield* purge(retention.idempotencyKeysStartedBefore(new Date(at.getTime() - DAY_MS)))
  })
})
