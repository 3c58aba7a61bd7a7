import { Effect, Option } from "effect"
import type { SqlClient } from "effect/sql"
import { processOwner, takeLease } from "./ReplicaLease.ts"

/**
 * How long a round's lease outlives it: the holder renews it each round, and another replica takes over this long
 * after the holder died (or whenever the holder's rounds are further apart than this).
 */
export const DEFAULT_LEASE_HOLD_MS = 30_000

/**
 * Runs `effect` in a transaction holding this process's lease `name` (`ReplicaLease`), so one replica does it at a
 * time; a replica that finds another's lease live skips the round (none).
 */
export const onOneReplica =
  (sql: SqlClient.SqlClient, name: string, holdForMs = DEFAULT_LEASE_HOLD_MS) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    Effect.gen(function*() {
      if (!(yield* takeLease(sql, { name, owner: processOwner, holdForMs }))) return Option.none<A>()
      return Option.some(yield* effect)
    }).pipe(sql.withTransaction)
