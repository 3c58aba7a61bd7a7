/**
 * Leases between replicas (`background/ReplicaLease.ts`), rows of `replica_leases` instead of advisory locks: two
 * owners (two replicas) on one database. Expiry is driven by writing `expires_at` into the past, never by waiting.
 */
import { expect, layer } from "@effect/vitest"
import { Deferred, Effect, Fiber, Option } from "effect"
import { SqlClient } from "effect/sql"
import { onOneReplica } from "../../src/background/OneReplica.ts"
import { processOwner, takeLease } from "../../src/background/ReplicaLease.ts"
import { TestDatabaseMigrated } from "../support/database.ts"

const HOUR_MS = 3_600_000
const FIRST = "replica_first"
const SECOND = "replica_second"
const DEADLINE_MS = 10_000

const take = (owner: string, name: string, holdForMs = HOUR_MS) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql.withTransaction(takeLease(sql, { name, owner, holdForMs })))

const leaseOf = (name: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ owner: string; seconds_left: number }>`
      SELECT owner, extract(epoch FROM expires_at - now())::float8 AS seconds_left FROM replica_leases WHERE name = ${name}`
      .pipe(Effect.map((rows) => rows[0])))

const setExpiry = (name: string, fromNow: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql`UPDATE replica_leases SET expires_at = now() + ${fromNow}::interval WHERE name = ${name}`
  )

/** Backends of this database waiting on a lock in a lease statement. */
const leaseWaiters = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql<{ n: number }>`
    SELECT count(*)::int AS n FROM pg_stat_activity
    WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%INSERT INTO replica_leases%'`
    .pipe(Effect.map((rows) => rows[0]?.n ?? 0)))

/**
 * Takes `name` for `owner` in a transaction kept open (its row locked, as during a round) until the answered release
 * is completed; answers whether it took it and the release.
 */
const holdRound = (owner: string, name: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const taken = yield* Deferred.make<boolean>()
    const release = yield* Deferred.make<void>()
    const round = yield* Effect.forkChild(
      sql.withTransaction(
        takeLease(sql, { name, owner, holdForMs: HOUR_MS }).pipe(
          Effect.tap((took) => Deferred.succeed(taken, took)),
          Effect.andThen(Deferred.await(release))
        )
      )
    )
    return {
      took: yield* Deferred.await(taken),
      end: Deferred.succeed(release, undefined).pipe(Effect.andThen(Fiber.join(round)))
    }
  })

/** Polls `condition` until it holds; dies past DEADLINE_MS with `what`. */
const eventually = (what: string, condition: Effect.Effect<boolean, unknown, SqlClient.SqlClient>) =>
  Effect.gen(function*() {
    while (!(yield* condition)) yield* Effect.sleep("20 millis")
  }).pipe(Effect.timeoutOrElse({ duration: DEADLINE_MS, orElse: () => Effect.die(new Error(`never: ${what}`)) }))

// excludeTestServices: the real clock, for the polls and their deadline.
layer(TestDatabaseMigrated, { timeout: 60_000, excludeTestServices: true })("replica leases", (it) => {
  it.effect("one owner holds a lease; another is refused while it is live, and the holder takes it again", () =>
    Effect.gen(function*() {
      expect(yield* take(FIRST, "one-holder")).toBe(true)
      expect(yield* take(SECOND, "one-holder")).toBe(false)
      expect(yield* take(FIRST, "one-holder")).toBe(true)
      expect((yield* leaseOf("one-holder"))?.owner).toBe(FIRST)
    }))

  it.effect("the holder renews its lease: each round it runs the hold from the database's now", () =>
    Effect.gen(function*() {
      expect(yield* take(FIRST, "renewed")).toBe(true)
      yield* setExpiry("renewed", "5 seconds")
      expect(yield* take(FIRST, "renewed")).toBe(true)
      const lease = yield* leaseOf("renewed")
      expect(lease?.owner).toBe(FIRST)
      expect(lease?.seconds_left).toBeGreaterThan(HOUR_MS / 1000 - 600)
    }))

  it.effect("another owner takes over once the lease has expired; the old holder is then refused", () =>
    Effect.gen(function*() {
      expect(yield* take(FIRST, "taken-over")).toBe(true)
      yield* setExpiry("taken-over", "-1 second")
      expect(yield* take(SECOND, "taken-over")).toBe(true)
      expect((yield* leaseOf("taken-over"))?.owner).toBe(SECOND)
      expect(yield* take(FIRST, "taken-over")).toBe(false)
    }))

  it.effect("two owners taking an expired lease at once: the one that waited finds the other's and is refused", () =>
    Effect.gen(function*() {
      expect(yield* take("replica_dead", "raced")).toBe(true)
      yield* setExpiry("raced", "-1 second")
      const first = yield* holdRound(FIRST, "raced")
      expect(first.took).toBe(true)
      // SECOND read the expired lease before FIRST's took it (not committed): it waits on the row, then decides.
      const second = yield* Effect.forkChild(take(SECOND, "raced"))
      yield* eventually("the second owner waits on the lease row", Effect.map(leaseWaiters, (n) => n === 1))
      yield* first.end
      expect(yield* Fiber.join(second)).toBe(false)
      expect((yield* leaseOf("raced"))?.owner).toBe(FIRST)
    }))

  it.effect("a replica finding another's live lease skips at once, without waiting for the holder's round to end", () =>
    Effect.gen(function*() {
      // FIRST holds the lease from an earlier round and is in its next one
      expect(yield* take(FIRST, "busy")).toBe(true)
      const first = yield* holdRound(FIRST, "busy")
      expect(first.took).toBe(true)
      const second = yield* Effect.forkChild(take(SECOND, "busy"))
      const skipped = yield* Effect.raceFirst(
        Fiber.join(second),
        eventually("the second owner waits on the lease row", Effect.map(leaseWaiters, (n) => n > 0)).pipe(
          Effect.as("waited" as const)
        )
      )
      yield* first.end
      expect(skipped).toBe(false)
    }))

  it.effect("onOneReplica runs the round on this process's lease and skips it (none) while another's is live", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`INSERT INTO replica_leases (name, owner, expires_at) VALUES ('round', ${SECOND}, now() + interval '1 hour')`
      const round = onOneReplica(sql, "round")(Effect.succeed("ran"))
      expect(yield* round).toEqual(Option.none())
      yield* setExpiry("round", "-1 second")
      expect(yield* round).toEqual(Option.some("ran"))
      expect((yield* leaseOf("round"))?.owner).toBe(processOwner)
      expect(yield* round).toEqual(Option.some("ran"))
    }))
})
