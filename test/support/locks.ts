/**
 * Locks held from outside the app, to make its requests wait deterministically, and a probe for the
 * backends that are waiting on a lock.
 */
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { DatabaseTimeouts } from "../../src/db/Database.ts"

/**
 * Database timeouts for a service whose requests wait on a test's lock or row on purpose: longer than the production
 * lock_timeout (and statement timeout) allow.
 */
export const patientDatabase = Layer.succeed(DatabaseTimeouts, {
  connect: "10 seconds",
  statement: "120 seconds",
  lock: "120 seconds",
  idleInTransaction: "120 seconds",
  query: "120 seconds",
  keepAliveDelay: "10 seconds"
})

export interface HeldLock {
  /** Commits the holding transaction (the lock is gone when this resolves). */
  readonly release: () => Promise<void>
}

type Run = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>) => Promise<A>

/**
 * Runs `statement` (e.g. `LOCK TABLE payouts IN SHARE MODE`) in a transaction on its own connection and
 * keeps the transaction open until `release`. Resolves once the lock is held.
 */
export const holdLock = async (run: Run, statement: string): Promise<HeldLock> => {
  let markHeld = () => {}
  const held = new Promise<void>((resolve) => (markHeld = resolve))
  let finish = () => {}
  const done = new Promise<void>((resolve) => (finish = resolve))
  const holding = run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.withTransaction(
      sql.unsafe(statement).pipe(
        Effect.andThen(Effect.sync(() => markHeld())),
        Effect.andThen(Effect.promise(() => done))
      )
    )))
  await Promise.race([held, holding.then(() => Promise.reject(new Error("the lock holder ended before holding")))])
  return {
    release: async () => {
      finish()
      await holding
    }
  }
}

/** Backends of the current database whose statement starts with `prefix` and that wait on a lock. */
export const lockWaiters = (run: Run, prefix: string): Promise<number> =>
  run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ readonly n: number }>`
      SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND wait_event_type = 'Lock'
        AND ltrim(query) LIKE ${`${prefix}%`}`.pipe(Effect.map((rows) => rows[0]?.n ?? 0), Effect.orDie)))

/**
 * Runs `write` (e.g. an INSERT that takes a unique key the app will want) in a transaction on its own connection and
 * keeps the transaction open until `release`, which rolls it back: the app's statement waiting on it then goes on as
 * if it had never been there. Resolves once `write` is done.
 */
export const holdUncommitted = async (
  run: Run,
  write: (sql: SqlClient.SqlClient) => Effect.Effect<unknown, unknown>
): Promise<HeldLock> => {
  let markHeld = () => {}
  const held = new Promise<void>((resolve) => (markHeld = resolve))
  let finish = () => {}
  const done = new Promise<void>((resolve) => (finish = resolve))
  const rolledBack = Symbol("rolled back")
  const holding = run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.withTransaction(
      write(sql).pipe(
        Effect.andThen(Effect.sync(() => markHeld())),
        Effect.andThen(Effect.promise(() => done)),
        Effect.andThen(Effect.fail(rolledBack))
      )
    ).pipe(Effect.catchIf((error) => error === rolledBack, () => Effect.void))))
  await Promise.race([held, holding.then(() => Promise.reject(new Error("the holder ended before holding")))])
  return {
    release: async () => {
      finish()
      await holding
    }
  }
}
