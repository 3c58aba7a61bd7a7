import { SqlClient, type Statement } from "effect/sql"
import { Effect, Schema } from "effect"

const Deleted = Schema.Struct({ deleted: Schema.Number })

/**
 * The rows housekeeping deletes once past their retention (the cutoffs are its own), one batch of at most `limit`
 * rows a call; each answers how many it deleted.
 */
export const makeRetentionRepo = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const deleteBatch = (table: string, key: string, condition: Statement.Fragment) => (limit: number) =>
    sql`WITH gone AS (DELETE FROM ${sql(table)} WHERE ${sql(key)} IN (
          SELECT ${sql(key)} FROM ${sql(table)} WHERE ${condition} LIMIT ${limit}) RETURNING 1)
        SELECT count(*)::int AS deleted FROM gone`.pipe(
      Effect.flatMap(([row]) => Schema.decodeUnknownEffect(Deleted)(row)),
      Effect.map((batch) => batch.deleted)
    )

  return {
    quotesExpiredBefore: (cutoff: Date) => deleteBatch("quotes", "id", sql`expires_at < ${cutoff}`),
    otpChallengesExpiredBefore: (cutoff: Date) => deleteBatch("otp_challenges", "id", sql`expires_at < ${cutoff}`),
    jobsFinishedBefore: (cutoff: Date) => deleteBatch("jobs", "id", sql`done_at < ${cutoff} OR dead_at < ${cutoff}`),
    providerEventsReceivedBefore: (cutoff: Date) =>
      deleteBatch("webhook_events", "event_id", sql`received_at < ${cutoff}`),
    /** Partner events (their deliveries and attempts go with them), once none is still being delivered. */
    partnerEventsCreatedBefore: (cutoff: Date) =>
      deleteBatch(
        "events",
        "id",
        sql`created_at < ${cutoff} AND NOT EXISTS (SELECT 1 FROM event_deliveries d WHERE d.event_id = events.id AND d.state = 'pending')`
      ),
    /** Dashboard sign-in links (valid 5 minutes) and sessions (hours), once past their expiry. */
    dashboardLinksExpiredBefore: (cutoff: Date) =>
      deleteBatch("dashboard_sign_in_links", "token_hash", sql`expires_at < ${cutoff}`),
    dashboardSessionsExpiredBefore: (cutoff: Date) =>
      deleteBatch("dashboard_sessions", "id", sql`expires_at < ${cutoff}`),
    /** Request logs (src/requestLogs) of requests made before the cutoff. */
    requestLogsBefore: (cutoff: Date) => deleteBatch("request_logs", "id", sql`at < ${cutoff}`),
    /** Idempotency-Keys whose request died before finishing. */
    idempotencyKeysStartedBefore: (cutoff: Date) =>
      deleteBatch("idempotency_keys", "ctid", sql`state = 'started' AND started_at < ${cutoff}`)
  } as const
})
