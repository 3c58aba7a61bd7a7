/**
 * The heartbeat keeps a working request's Idempotency-Key: with IdempotencyStale at 300 ms, requests that work for
 * four times that are not taken over by a duplicate with the same key and body (it waits and replays the first
 * answer). Without the heartbeat the duplicate would find the row stale and run the work a second time.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Duration, Effect, Fiber, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { IntegrationId } from "@cop-integrations/contracts"
import { runMigrations } from "../../src/db/Migrations.ts"
import { IdempotencyStale, IdempotencyStore, IdempotencyWait } from "../../src/idempotency/IdempotencyStore.ts"
import { acquireTestDatabase, type TestDatabase } from "../support/database.ts"

const STALE_MS = 300
const WORK_MS = 4 * STALE_MS
const integrationId = IntegrationId.make("int_heartbeat")

let database: TestDatabase
beforeAll(async () => {
  database = await acquireTestDatabase()
  await Effect.runPromise(
    Effect.gen(function*() {
      yield* runMigrations
      const sql = yield* SqlClient.SqlClient
      yield* sql`INSERT INTO integrations (id, name) VALUES (${integrationId}, 'heartbeat')`
    }).pipe(Effect.provide(database.layer))
  )
})
afterAll(() => database?.release())

const store = () =>
  IdempotencyStore.Default.pipe(
    Layer.provide(database.layer),
    Layer.provide(Layer.succeed(IdempotencyStale, Duration.millis(STALE_MS))),
    Layer.provide(Layer.succeed(IdempotencyWait, Duration.seconds(5)))
  )

describe("IdempotencyStore heartbeat", () => {
  it("requests working longer than IdempotencyStale keep their keys: each duplicate waits and replays", async () => {
    const keys = Array.from({ length: 5 }, (_, i) => `hb-${i}-${crypto.randomUUID()}`)
    const runs = new Map<string, number>()
    const outcomes = await Effect.gen(function*() {
      const idempotency = yield* IdempotencyStore
      const request = (key: string, resourceId: string) =>
        idempotency.run(
          { integrationId, key, fingerprint: "same-body", resourceId, providerKey: `pk_${resourceId}` },
          (claim) =>
            Effect.sync(() => runs.set(key, (runs.get(key) ?? 0) + 1)).pipe(
              Effect.andThen(Effect.sleep(Duration.millis(WORK_MS))),
              Effect.as(claim.resourceId)
            ),
          (resourceId) => Effect.succeed({ status: 201, body: { id: resourceId }, resourceId })
        )
      return yield* Effect.forEach(keys, (key) =>
        Effect.gen(function*() {
          const first = yield* Effect.forkChild(request(key, `first_${key}`))
          // Well past the stale age: only the heartbeat keeps the first request's row fresh.
          yield* Effect.sleep(Duration.millis(WORK_MS - STALE_MS))
          const duplicate = yield* request(key, `second_${key}`)
          return { first: yield* Fiber.join(first), duplicate }
        }), { concurrency: "unbounded" })
    }).pipe(Effect.provide(store()), Effect.runPromise)

    for (const [i, key] of keys.entries()) {
      expect(runs.get(key)).toBe(1)
      const outcome = outcomes[i]
      expect(outcome?.first).toMatchObject({ resourceId: `first_${key}`, replayed: false })
      expect(outcome?.duplicate).toMatchObject({ resourceId: `first_${key}`, replayed: true, status: 201 })
    }
  }, 20_000)
})
