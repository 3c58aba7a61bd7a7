/**
 * The horizon of the lists ordered by creation time (src/db/ListHorizon.ts), on the database: a row being inserted
 * (its `created_at` taken, its transaction open) holds the integration's horizon at or before that `created_at`, so a
 * page never lists past it; other integrations' inserts do not; once it commits, the horizon is past it at once (a
 * list asked after a commit shows the row).
 */
import { layer } from "@effect/vitest"
import { Deferred, Effect, Fiber } from "effect"
import { SqlClient } from "effect/sql"
import { expect } from "vitest"
import { creationTime, visibleBefore } from "../../src/db/ListHorizon.ts"
import { runMigrations } from "../../src/db/Migrations.ts"
import { TestDatabaseLive } from "../support/database.ts"
import { payoutRow } from "../support/payoutRow.ts"

const ONE = "int_horizon_one"
const TWO = "int_horizon_two"

/** An insert in flight for `integration`: its creation time taken, its transaction open until `release`. */
const inFlight = (sql: SqlClient.SqlClient, integration: string) =>
  Effect.gen(function*() {
    const stamped = yield* Deferred.make<Date>()
    const release = yield* Deferred.make<void>()
    const fiber = yield* sql.withTransaction(
      creationTime(sql, "payouts", integration).pipe(
        Effect.flatMap((at) => Deferred.succeed(stamped, at)),
        Effect.andThen(Deferred.await(release))
      )
    ).pipe(Effect.forkChild)
    const at = yield* Deferred.await(stamped)
    return { at, end: Deferred.succeed(release, undefined).pipe(Effect.andThen(Fiber.join(fiber))) }
  })

layer(TestDatabaseLive, { timeout: "60 seconds", excludeTestServices: true })("list horizon", (it) => {
  it.effect("an insert in flight holds its integration's horizon at or before its created_at, and only that one", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* runMigrations
      const insert = yield* inFlight(sql, ONE)
      expect((yield* visibleBefore(sql, "payouts", ONE)).getTime()).toBeLessThanOrEqual(insert.at.getTime())
      // another table, another integration: not held back by it
      expect((yield* visibleBefore(sql, "swap_intents", ONE)).getTime()).toBeGreaterThan(insert.at.getTime())
      expect((yield* visibleBefore(sql, "payouts", TWO)).getTime()).toBeGreaterThan(insert.at.getTime())
      yield* insert.end
      expect((yield* visibleBefore(sql, "payouts", ONE)).getTime()).toBeGreaterThan(insert.at.getTime())
    }))

  it.effect("a row committed before the list is asked for is before its horizon, even in the same millisecond", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* runMigrations
      yield* sql`INSERT INTO integrations (id, name) VALUES (${ONE}, ${ONE}) ON CONFLICT DO NOTHING`
      for (let i = 0; i < 20; i++) {
        // A create as the repositories make it: the creation time, then the row, committed before the list is asked.
        const at = yield* sql.withTransaction(
          Effect.tap(
            creationTime(sql, "payouts", ONE),
            (at) =>
              sql`INSERT INTO payouts ${
                sql.insert({ ...payoutRow(`po_horizon_${i}`, "awaiting_deposit", at, at), integration_id: ONE })
              }`
          )
        )
        expect((yield* visibleBefore(sql, "payouts", ONE)).getTime()).toBeGreaterThan(at.getTime())
      }
    }))
})
