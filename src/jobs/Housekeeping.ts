import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { now } from "../Clock.ts"
import { AppConfig } from "../Config.ts"

/** Rows deleted per statement, each batch its own short transaction. */
export const HOUSEKEEPING_BATCH = 5000
const BATCH = HOUSEKEEPING_BATCH
const DAY_MS = 24 * 60 * 60 * 1000

const Deleted = Schema.Struct({ deleted: Schema.Number })
const LockTaken = Schema.Struct({ taken: Schema.Boolean })

/**
 * Retention, one replica at a time. Deleted once past their retention (counted from when they stopped
 * mattering): expired quotes and OTP challenges and finished (done or dead) jobs after RETENTION_DAYS, provider
 * webhook events (kept for de-duplication) after WEBHOOK_EVENT_RETENTION_DAYS. Never a quote or OTP still valid
 * or inside the 24 h OTP send window (retention is at least a day), never an unfinished job.
 */
export const makeHousekeeping = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const config = yield* AppConfig

  const batchOf = (statement: Effect.Effect<ReadonlyArray<unknown>, unknown>) =>
    Effect.gen(function*() {
      const [lock] = yield* sql`SELECT pg_try_advisory_xact_lock(hashtext('housekeeping')) AS taken`
      if (!(yield* Schema.decodeUnknown(LockTaken)(lock)).taken) return 0
      const [row] = yield* statement
      return (yield* Schema.decodeUnknown(Deleted)(row)).deleted
    }).pipe(sql.withTransaction)

  const purge = (statement: Effect.Effect<ReadonlyArray<unknown>, unknown>) =>
    Effect.iterate(BATCH, { while: (deleted) => deleted === BATCH, body: () => batchOf(statement) })

  return Effect.gen(function*() {
    const at = yield* now
    const cutoff = new Date(at.getTime() - config.retentionDays * DAY_MS)
    const eventCutoff = new Date(at.getTime() - config.webhookEventRetentionDays * DAY_MS)
    yield* purge(sql`WITH gone AS (DELETE FROM quotes WHERE id IN (
                       SELECT id FROM quotes WHERE expires_at < ${cutoff} LIMIT ${BATCH}) RETURNING 1)
                     SELECT count(*)::int AS deleted FROM gone`)
    yield* purge(sql`WITH gone AS (DELETE FROM otp_challenges WHERE id IN (
                       SELECT id FROM otp_challenges WHERE expires_at < ${cutoff} LIMIT ${BATCH}) RETURNING 1)
                     SELECT count(*)::int AS deleted FROM gone`)
    yield* purge(sql`WITH gone AS (DELETE FROM jobs WHERE id IN (
                       SELECT id FROM jobs WHERE done_at < ${cutoff} OR dead_at < ${cutoff} LIMIT ${BATCH}) RETURNING 1)
                     SELECT count(*)::int AS deleted FROM gone`)
    yield* purge(sql`WITH gone AS (DELETE FROM webhook_events WHERE event_id IN (
                       SELECT event_id FROM webhook_events WHERE received_at < ${eventCutoff} LIMIT ${BATCH}) RETURNING 1)
                     SELECT count(*)::int AS deleted FROM gone`)
  })
})
