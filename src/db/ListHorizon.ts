import { Clock, Duration, Effect, Schema } from "effect"
import type { SqlClient, Statement } from "effect/sql"
import type { SqlError } from "effect/sql/SqlError"

/**
 * Lists ordered by creation time (payouts, swaps: `createdAt`, then id) made safe to follow with their cursor. A row
 * is only listed once no row can still commit before it in that order, so no row ever lands behind a cursor already
 * handed out (ARCHITECTURE.md, "Following a list").
 *
 * A writer, in the transaction that inserts the row, announces the insert (a shared advisory lock on the table and
 * integration, held until the transaction ends) and only then takes the row's `created_at` from the database clock:
 * so `created_at` is at or after the start of the transaction, and while the row is uncommitted its transaction is
 * among the lock's holders. A reader asks, before reading the page (its own statement, so the page's snapshot is
 * taken later), for the start of the oldest transaction holding that lock, or its own statement time when there is
 * none, and lists only rows created before that moment: each is committed (visible to the page), or it would be
 * newer than the moment. A holder whose start it cannot see counts as holding since 1970: nothing new is listed while
 * it holds, never something out of order.
 *
 * A list also waits (briefly) for the creates in flight when it was asked, so what committed before a list was asked
 * for is in it: when one of them started before that moment, or a row committed before it was created in its very
 * millisecond (the answer must then be a later millisecond), it asks again until the answer is past that moment.
 */

/** How long a list waits for creates in flight when it was asked; after that it leaves them for a later call. */
const WAIT_FOR_CREATES_MS = 500
const WAIT_STEP = Duration.millis(1)

export type CreatedTable = "payouts" | "swap_intents" | "payout_batches"

const Horizon = Schema.Struct({
  asked: Schema.NumberFromString,
  horizon: Schema.NumberFromString,
  fresh: Schema.Boolean
})

const lockKeys = (sql: SqlClient.SqlClient, table: CreatedTable, integrationId: string) => ({
  table: sql`hashtext(${`created:${table}`})`,
  integration: sql`hashtext(${integrationId})`
})

/**
 * The new row's `created_at`, from the database clock, truncated to milliseconds (as the API shows it), after
 * announcing the insert. Runs inside the inserting transaction (the announcement lasts until it ends).
 */
export const creationTime = (
  sql: SqlClient.SqlClient,
  table: CreatedTable,
  integrationId: string
): Effect.Effect<Date, SqlError> => {
  const key = lockKeys(sql, table, integrationId)
  return sql<{ readonly at: Date }>`
    SELECT date_trunc('milliseconds', clock_timestamp()) AS at
    FROM (SELECT pg_advisory_xact_lock_shared(${key.table}, ${key.integration}) OFFSET 0) AS announced`.pipe(
    Effect.map((rows) => rows[0]!.at)
  )
}

/**
 * Rows created before `horizon` are safe to list (see above). `asked` is this statement's own time: the horizon is at
 * most that; `fresh`: a visible row was created in that very millisecond. Milliseconds since the epoch, truncated as
 * `created_at` is. pg_locks shows an advisory lock's two keys as oids, the integers' bits read unsigned: hence the
 * casts through bigint.
 */
const horizonNow = (sql: SqlClient.SqlClient, table: CreatedTable, integrationId: string) => {
  const key = lockKeys(sql, table, integrationId)
  const asOid = (value: Statement.Fragment) => sql`((${value})::bigint & 4294967295)`
  return sql`
    SELECT (extract(epoch FROM date_trunc('milliseconds', statement_timestamp())) * 1000)::bigint AS asked,
           (extract(epoch FROM date_trunc('milliseconds',
              LEAST(statement_timestamp(), min(COALESCE(a.xact_start, 'epoch'::timestamptz))))) * 1000)::bigint AS horizon,
           EXISTS (SELECT 1 FROM ${sql(table)} WHERE integration_id = ${integrationId}
                   AND created_at >= date_trunc('milliseconds', statement_timestamp())) AS fresh
    FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid
    WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
      AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
      AND l.classid::bigint = ${asOid(key.table)} AND l.objid::bigint = ${asOid(key.integration)}`.pipe(
    Effect.flatMap((rows) => Schema.decodeUnknownEffect(Horizon)(rows[0])),
    Effect.orDie
  )
}

/**
 * The moment before which the integration's rows of `table` can be listed: after every create in flight when it was
 * asked has ended (or WAIT_FOR_CREATES_MS has passed), so everything committed before the call is before it.
 */
export const visibleBefore = (
  sql: SqlClient.SqlClient,
  table: CreatedTable,
  integrationId: string
): Effect.Effect<Date, SqlError> =>
  Effect.gen(function*() {
    const first = yield* horizonNow(sql, table, integrationId)
    if (first.horizon === first.asked && !first.fresh) return new Date(first.horizon)
    const deadline = (yield* Clock.currentTimeMillis) + WAIT_FOR_CREATES_MS
    let current = first
    while (current.horizon <= first.asked && (yield* Clock.currentTimeMillis) < deadline) {
      yield* Effect.sleep(WAIT_STEP)
      current = yield* horizonNow(sql, table, integrationId)
    }
    return new Date(current.horizon)
  })
