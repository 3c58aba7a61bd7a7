import { Effect, Option, Schema } from "effect"
import type { SqlClient } from "effect/sql"

const LockTaken = Schema.Struct({ taken: Schema.Boolean })

/**
 * Runs `effect` in a transaction holding the advisory lock `name`, so only one replica does it at a time; a
 * replica that finds the lock taken skips the round (none).
 */
export const onOneReplica = (sql: SqlClient.SqlClient, name: string) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const [lock] = yield* sql`SELECT pg_try_advisory_xact_lock(hashtext(${name})) AS taken`
    if (!(yield* Schema.decodeUnknownEffect(LockTaken)(lock)).taken) return Option.none<A>()
    return Option.some(yield* effect)
  }).pipe(sql.withTransaction)
