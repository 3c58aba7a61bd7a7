import { SqlClient, type Statement } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { now } from "../base/Clock.ts"
import { AppConfig } from "../config/Config.ts"
import { onOneReplica } from "../work/OneReplica.ts"

/** Rows deleted per statement, each batch its own short transaction. */
export const HOUSEKEEPING_BATCH = 5000
const DAY_MS = 24 * 60 * 60 * 1000

const Deleted = Schema.Struct({ deleted: Schema.Number })

/**
 * Retention, one replica at a time. Deleted once past their retention (counted from when they stopped
 * mattering): expired quotes and OTP challenges and finished (done or dead) jobs after RETENTION_DAYS, provider
 * webhook events (kept for de-duplication) after WEBHOOK_EVENT_RETENTION_DAYS, partner events and their deliveries after
 * RETENTION_DAYS. Never a quote or OTP still valid
 * or inside the 24 h OTP send window (retention is at least a day), never an unfinished job. Idempotency-Keys left
 * `started` by a request that died are freed after 24 h (the provider keeps its idempotency keys that long).
 */
export const makeHousekeeping = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const config = yield* AppConfig

  const deleteBatch = (table: string, key: string, condition: Statement.Fragment) =>
    sql`WITH gone AS (DELETE FROM ${sql(table)} WHERE ${sql(key)} IN (
          SELECT ${sql(key)} FROM ${sql(table)} WHERE ${condition} LIMIT ${HOUSEKEEPING_BATCH}) RETURNING 1)
        SELECT count(*)::int AS deleted FROM gone`.pipe(
      Effect.flatMap(([row]) => Schema.decodeUnknown(Deleted)(row)),
      onOneReplica(sql, "housekeeping"),
      Effect.map(Option.match({ onNone: () => 0, onSome: (batch) => batch.deleted }))
    )

  /** Deletes batch after batch until one comes back short. */
  const purge = (table: string, key: string, condition: Statement.Fragment) =>
    Effect.iterate(HOUSEKEEPING_BATCH, {
      while: (deleted) => deleted === HOUSEKEEPING_BATCH,
      body: () => deleteBatch(table, key, condition)
    })

  return Effect.gen(function*() {
    const at = yield* now
    const cutoff = new Date(at.getTime() - config.retentionDays * DAY_MS)
    const eventCutoff = new Date(at.getTime() - config.webhookEventRetentionDays * DAY_MS)
    yield* purge("quotes", "id", sql`expires_at < ${cutoff}`)
    yield* purge("otp_challenges", "id", sql`expires_at < ${cutoff}`)
    yield* purge("jobs", "id", sql`done_at < ${cutoff} OR dead_at < ${cutoff}`)
    yield* purge("webhook_events", "event_id", sql`received_at < ${eventCutoff}`)
    // Partner events (their deliveries and attempts go with them), once none is still being delivered.
    yield* purge(
      "events",
      "id",
      sql`created_at < ${cutoff} AND NOT EXISTS (SELECT 1 FROM event_deliveries d WHERE d.event_id = events.id AND d.state = 'pending')`
    )
    // An Idempotency-Key whose request died before finishing, once the provider has forgotten its own key (24 h).
    yield* purge("idempotency_keys", "ctid", sql`state = 'started' AND started_at < ${new Date(at.getTime() - DAY_MS)}`)
  })
})
