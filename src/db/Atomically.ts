import { Effect, Option } from "effect"
import type { SqlClient } from "effect/sql"
import type { SqlError } from "effect/sql/SqlError"

/**
 * Runs `effect` in a transaction: the caller's, when it is already in one, else a new one. Unlike a nested
 * `withTransaction` it adds no savepoint (two round trips): for steps that must commit together and whose failure
 * fails the caller's transaction anyway. Where a failure must be rolled back while the caller goes on (a job's
 * attempt), use `withTransaction`.
 */
export const atomically =
  (sql: SqlClient.SqlClient) => <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | SqlError, R> =>
    Effect.flatMap(
      Effect.serviceOption(sql.transactionService),
      (outer) => Option.isSome(outer) ? effect : sql.withTransaction(effect)
    )
