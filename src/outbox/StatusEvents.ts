import { Effect, Schema } from "effect"
import type { SqlClient } from "effect/sql"
import { atomically } from "../db/Atomically.ts"

/** Added to an UPDATE's RETURNING: the status the row had before the statement (read from its snapshot). */
export const PreviousStatus = Schema.Struct({ previous_status: Schema.String })

/**
 * Wraps a repository's UPDATE so the resource's event is recorded in the same transaction when, and only when, the
 * update changed its status (a write that only adds a txHash or a settled leg records nothing).
 */
export const recordingStatusChanges = <Row extends { readonly status: string }, E, R>(
  sql: SqlClient.SqlClient,
  update: (row: Row) => Effect.Effect<Row & typeof PreviousStatus.Type, E, R>,
  record: (row: Row) => Effect.Effect<unknown>
) =>
(row: Row): Effect.Effect<Row, never, R> =>
  Effect.gen(function*() {
    const { previous_status, ...stored } = yield* update(row)
    // The row as the UPDATE returned it, less the added column: TypeScript cannot see that is a Row for a generic Row.
    if (previous_status !== stored.status) yield* record(stored as unknown as Row)
    return stored as unknown as Row
  }).pipe(atomically(sql), Effect.orDie)
