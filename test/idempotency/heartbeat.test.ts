/**
 * The heartbeat keeps a working request's Idempotency-Key. A request holds its key past IdempotencyStale (2 s here,
 * beats every ~667 ms), by the database's own clock; a duplicate with the same key and body then looks once
 * (IdempotencyWait zero) and finds the key in progress, not stale: it does not run the work a second time. Without the
 * heartbeat the row would be stale and the duplicate would take it over (runs 2).
 *
 * No sleeps: the held request waits on a Deferred, and the test waits on the database's condition (the row older than
 * the stale age, its `started_at` refreshed). A beat would have to be starved for over 1.3 s to lose the key, which a
 * busy machine (load 10-16) does not do; at the old 300 ms stale age and 100 ms beat, it did.
 */
import { expect, layer } from "@effect/vitest"
import { Deferred, Duration, Effect, Exit, Fiber, Layer, Schedule, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { IntegrationId } from "@cop-integrations/contracts"
import {
  IdempotencyKeyInProgress,
  IdempotencyStale,
  IdempotencyStore,
  IdempotencyWait
} from "../../src/idempotency/IdempotencyStore.ts"
import { TestDatabaseMigrated } from "../support/database.ts"

const STALE_MS = 2_000
const integrationId = IntegrationId.make("int_heartbeat")

const integration = Layer.effectDiscard(
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql`INSERT INTO integrations (id, name) VALUES (${integrationId}, 'heartbeat')`
  )
).pipe(Layer.orDie)

/** The store over a fresh database with this file's integration, stale after STALE_MS, a duplicate looking once. */
const store = Layer.mergeAll(
  IdempotencyStore.Default.pipe(
    Layer.provide(Layer.succeed(IdempotencyStale, Duration.millis(STALE_MS))),
    Layer.provide(Layer.succeed(IdempotencyWait, Duration.zero))
  ),
  integration
).pipe(Layer.provideMerge(TestDatabaseMigrated))

const RowAge = Schema.Struct({ older_than_stale: Schema.Boolean, beaten: Schema.Boolean })

/**
 * Waits (a condition, polled) until the key's row is older than the stale age by the database's clock; answers whether
 * its heartbeat has refreshed it since.
 */
const heldPastStale = (key: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql`SELECT now() - created_at > ${
      STALE_MS * 1.5
    } * interval '1 millisecond' AS older_than_stale,
                                   started_at > created_at AS beaten
                            FROM idempotency_keys WHERE integration_id = ${integrationId} AND idempotency_key = ${key}`
    const age = rows.length === 0 ? undefined : Schema.decodeUnknownSync(RowAge)(rows[0])
    if (age === undefined || !age.older_than_stale) return yield* Effect.fail("not yet")
    return age.beaten
  }).pipe(Effect.retry(Schedule.spaced(Duration.millis(50))))

// excludeTestServices: the real clock, which the heartbeat beats by (and the database ages the row by).
layer(store, { excludeTestServices: true })("IdempotencyStore heartbeat", (it) => {
  it.effect(
    "a request working past IdempotencyStale keeps its key: a duplicate finds it in progress, not stale",
    () =>
      Effect.gen(function*() {
        const keys = Array.from({ length: 5 }, (_, i) => `hb-${i}-${crypto.randomUUID()}`)
        const runs = new Map<string, number>()
        const idempotency = yield* IdempotencyStore
        const request = (key: string, resourceId: string, held: Deferred.Deferred<void>) =>
          idempotency.run(
            { integrationId, key, fingerprint: "same-body", resourceId, providerKey: `pk_${resourceId}` },
            (claim) =>
              Effect.sync(() => runs.set(key, (runs.get(key) ?? 0) + 1)).pipe(
                Effect.andThen(Deferred.await(held)),
                Effect.as(claim.resourceId)
              ),
            (resourceId) => Effect.succeed({ status: 201, body: { id: resourceId }, resourceId })
          )
        const outcomes = yield* Effect.forEach(keys, (key) =>
          Effect.gen(function*() {
            const held = yield* Deferred.make<void>()
            const free = yield* Deferred.make<void>()
            yield* Deferred.succeed(free, undefined)
            const first = yield* Effect.forkChild(request(key, `first_${key}`, held))
            const beaten = yield* heldPastStale(key)
            // A duplicate that took the key over would run its work at once (`free`), and this would see it.
            const duplicate = yield* Effect.exit(request(key, `second_${key}`, free))
            yield* Deferred.succeed(held, undefined)
            const done = yield* Effect.exit(Fiber.join(first))
            const replay = yield* Effect.exit(request(key, `third_${key}`, free))
            return { beaten, duplicate, done, replay }
          }), { concurrency: "unbounded" })

        for (const [i, key] of keys.entries()) {
          expect(runs.get(key)).toBe(1)
          const outcome = outcomes[i]!
          expect(outcome.beaten).toBe(true)
          expect(Exit.isFailure(outcome.duplicate) && Exit.findErrorOption(outcome.duplicate)).toMatchObject({
            value: expect.any(IdempotencyKeyInProgress)
          })
          expect(outcome.done).toMatchObject({ value: { resourceId: `first_${key}`, replayed: false } })
          expect(outcome.replay).toMatchObject({ value: { resourceId: `first_${key}`, replayed: true, status: 201 } })
        }
      }),
    60_000
  )
})
