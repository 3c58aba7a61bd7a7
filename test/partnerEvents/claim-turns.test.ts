/**
 * Delivery claims take turns between replicas on a row lock of `replica_leases` (`deliveries:claim`), not a global
 * advisory lock: the caps are computed over the leases in flight, so a claim must see the leases the one before it
 * took. A claim whose transaction is still open holds the turn; another claim (another connection: another replica)
 * waits for it and goes on once it commits.
 */
import { expect, layer } from "@effect/vitest"
import { Deferred, Effect, Fiber, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { DELIVERY_PER_ENDPOINT, DELIVERY_PER_INTEGRATION } from "../../src/partnerEvents/Delivery.ts"
import { DeliveryRepo } from "../../src/partnerEvents/DeliveryRepo.ts"
import { TestDatabaseMigrated } from "../support/database.ts"

const DEADLINE_MS = 10_000

const claimRequest = () => {
  const at = new Date()
  return {
    at,
    leasedUntil: new Date(at.getTime() + 60_000),
    limit: 10,
    perEndpoint: DELIVERY_PER_ENDPOINT,
    perIntegration: DELIVERY_PER_INTEGRATION
  }
}

/** Backends of this database waiting on a lock in the claim's turn statement. */
const claimWaiters = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql<{ n: number }>`
    SELECT count(*)::int AS n FROM pg_stat_activity
    WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%FROM replica_leases WHERE name%'`
    .pipe(Effect.map((rows) => rows[0]?.n ?? 0)))

// excludeTestServices: the real clock, for the poll and its deadline.
layer(Layer.provideMerge(DeliveryRepo.Default, TestDatabaseMigrated), { timeout: 60_000, excludeTestServices: true })(
  "delivery claims",
  (it) => {
    it.effect("take turns: a claim waits while another claim's transaction is open, then goes on", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const deliveries = yield* DeliveryRepo
        const claimed = yield* Deferred.make<void>()
        const commit = yield* Deferred.make<void>()
        // The first claim inside a transaction kept open: its turn lasts until that commits.
        const first = yield* Effect.forkChild(
          sql.withTransaction(
            deliveries.claim(claimRequest()).pipe(
              Effect.andThen(Deferred.succeed(claimed, undefined)),
              Effect.andThen(Deferred.await(commit))
            )
          )
        )
        yield* Deferred.await(claimed)
        const second = yield* Effect.forkChild(deliveries.claim(claimRequest()))
        const waited = yield* Effect.raceFirst(
          Effect.gen(function*() {
            while ((yield* claimWaiters) === 0) yield* Effect.sleep("20 millis")
            return "waited for its turn" as const
          }),
          Fiber.join(second).pipe(Effect.as("claimed beside the open claim" as const))
        ).pipe(Effect.timeoutOrElse({ duration: DEADLINE_MS, orElse: () => Effect.succeed("neither" as const) }))
        yield* Deferred.succeed(commit, undefined)
        yield* Fiber.join(first)
        expect(waited).toBe("waited for its turn")
        expect(yield* Fiber.join(second)).toEqual([])
      }))
  }
)
