import { Effect, Schema } from "effect"
import type { SqlClient } from "effect/sql"
import { atomically } from "../db/Atomically.ts"

/** Added to an UPDATE's RETURNING: the status the row had before the statement (read from its snapshot). */
export const PreviousStatus = Schema.Struct({ previous_status: Schema.String })

/** A row an UPDATE wrote, and the status it had before. */
export interface StatusChange<Row> {
  readonly row: Row
  readonly previousStatus: string
}

/** An UPDATE's RETURNING row split into the row as stored and the `previous_status` column added to it. */
export const statusChangeOf = <Stored extends typeof PreviousStatus.Type>(
  { previous_status, ...row }: Stored
): StatusChange<Omit<Stored, "previous_status">> => ({ row, previousStatus: previous_status })

/**
 * Wraps a repository's UPDATE so the resource's event is recorded in the same transaction when, and only when, the
 * update changed its status (a write that only adds a txHash or a settled leg records nothing).
 */
export const recordingStatusChanges = <Row extends { readonly status: string }, E, R>(
  sql: SqlClient.SqlClient,
  update: (row: Row) => Effect.Effect<StatusChange<Row>, E, R>,
  record: (row: Row) => Effect.Effect<unknown>
) =>
(row: Row): Effect.Effect<Row, never, R> =>
  Effect.gen(function*() {
    const { previousStatus, row: stored } = yield* update(row)
    if (previousStatus !== stored.status) yield* record(stored)
    return stored
  }).pipe(atomically(sql), Effect.orDie)
