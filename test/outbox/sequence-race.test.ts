/**
 * `sequence` under concurrency, on the database: two transactions recording events of one resource at once (a
 * provider webhook and the expiry sweep, say) take turns on the resource's counter row, so the numbers are unique and
 * gap-free whatever order they commit in; a rolled-back transaction gives its number back. The outbox is driven
 * directly, each transaction on its own connection, so the interleaving is forced rather than hoped for.
 */
import { layer } from "@effect/vitest"
import type { EventType, IntegrationId } from "@cop-integrations/contracts"
import { Deferred, Effect, Fiber } from "effect"
import { SqlClient } from "effect/sql"
import { expect } from "vitest"
import { runMigrations } from "../../src/db/Migrations.ts"
import { type NewEvent, Outbox } from "../../src/outbox/Outbox.ts"
import { TestDatabaseLive } from "../support/database.ts"

const INTEGRATION = "int_sequence_race" as IntegrationId

const setUp = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* runMigrations
  yield* sql`INSERT INTO integrations (id, name) VALUES (${INTEGRATION}, ${INTEGRATION}) ON CONFLICT DO NOTHING`
  return { sql, outbox: yield* Outbox.make }
})

const newResource = () => `po_race_${crypto.randomUUID().slice(0, 8)}`

const eventOf = (resourceId: string, type: EventType): NewEvent => ({
  integrationId: INTEGRATION,
  type,
  resourceId,
  object: { payoutId: resourceId },
  at: new Date()
})

/** The resource's events as stored: the column's number, the body's, and the type, in sequence order. */
const sequencesOf = (sql: SqlClient.SqlClient, resourceId: string) =>
  Effect.map(
    sql<{ sequence: number; body: string; type: string }>`
      SELECT sequence, body, type FROM events WHERE resource_id = ${resourceId} ORDER BY sequence`,
    (rows) => rows.map((row) => [row.sequence, (JSON.parse(row.body) as { sequence: number }).sequence, row.type])
  )

/** Resolves once a backend inserting an event waits on a lock (polls pg_stat_activity). */
const anEventInsertWaitsOnALock = (sql: SqlClient.SqlClient) =>
  Effect.gen(function*() {
    while (true) {
      const [row] = yield* sql<{ n: number }>`
        SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%INSERT INTO events%'`
      if ((row?.n ?? 0) > 0) return
      yield* Effect.sleep("5 millis")
    }
  })

layer(TestDatabaseLive, { timeout: "60 seconds", excludeTestServices: true })(
  "event sequence under concurrency",
  (it) => {
    it.effect("a transaction recording for a resource whose event is uncommitted waits, then takes the next number", () =>
      Effect.gen(function*() {
        const { outbox, sql } = yield* setUp
        const resource = newResource()
        const recorded = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        // the provider's webhook: its event is written, its transaction still open
        const webhook = yield* sql.withTransaction(
          outbox.record(eventOf(resource, "payout.processing")).pipe(
            Effect.andThen(Deferred.succeed(recorded, undefined)),
            Effect.andThen(Deferred.await(release))
          )
        ).pipe(Effect.forkChild)
        yield* Deferred.await(recorded)
        // the expiry sweep, meanwhile, on another connection
        const sweep = yield* sql.withTransaction(outbox.record(eventOf(resource, "payout.expired"))).pipe(
          Effect.forkChild
        )
        yield* anEventInsertWaitsOnALock(sql)
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(webhook)
        yield* Fiber.join(sweep)
        expect(yield* sequencesOf(sql, resource)).toEqual([[1, 1, "payout.processing"], [2, 2, "payout.expired"]])
      }))

    it.effect("a rolled-back transaction gives its number back: the next event has it", () =>
      Effect.gen(function*() {
        const { outbox, sql } = yield* setUp
        const resource = newResource()
        yield* outbox.record(eventOf(resource, "payout.created"))
        const rolledBack = yield* sql.withTransaction(
          Effect.andThen(outbox.record(eventOf(resource, "payout.processing")), Effect.fail("the change failed"))
        ).pipe(Effect.flip)
        expect(rolledBack).toBe("the change failed")
        yield* outbox.record(eventOf(resource, "payout.expired"))
        expect(yield* sequencesOf(sql, resource)).toEqual([[1, 1, "payout.created"], [2, 2, "payout.expired"]])
      }))

    it.effect("twelve transactions racing on one resource number its events 1 to 12, each once", () =>
      Effect.gen(function*() {
        const { outbox, sql } = yield* setUp
        const resource = newResource()
        const other = newResource()
        yield* Effect.all(
          Array.from({ length: 12 }, (_, i) =>
            sql.withTransaction(
              Effect.andThen(
                outbox.record(eventOf(resource, "payout.processing")),
                // every other one also records for a second resource: each resource counts on its own
                i % 2 === 0 ? outbox.record(eventOf(other, "payout.processing")) : Effect.void
              )
            )),
          { concurrency: "unbounded", discard: true }
        )
        const numbers = (yield* sequencesOf(sql, resource)).map(([sequence, inBody]) => [sequence, inBody])
        expect(numbers).toEqual(Array.from({ length: 12 }, (_, i) => [i + 1, i + 1]))
        expect((yield* sequencesOf(sql, other)).map(([sequence]) => sequence)).toEqual([1, 2, 3, 4, 5, 6])
      }))
  }
)
