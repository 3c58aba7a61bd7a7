import { describe, expect, it, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient, type SqlError } from "effect/sql"
import { TestDatabaseInfo, TestDatabaseLive } from "../support/database.ts"

// excludeTestServices: real clock, so the PgClient connect timeout really fires; `it.effect` then runs live.
layer(TestDatabaseLive, { timeout: "60 seconds", excludeTestServices: true })("test database picker", (it) => {
  it.effect("answers select 1 and hands out a connection URL", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const info = yield* TestDatabaseInfo
      const rows = yield* sql<{ readonly one: number }>`SELECT 1 AS one`
      expect(rows).toEqual([{ one: 1 }])
      expect(info.url).toMatch(/^postgres(ql)?:\/\//)
    }))

  it.effect("creates tables and round-trips rows", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE picker_items (id integer PRIMARY KEY, label text NOT NULL)`
      yield* sql`INSERT INTO picker_items ${sql.insert([{ id: 1, label: "a" }, { id: 2, label: "b" }])}`
      const rows = yield* sql<{ readonly id: number; readonly label: string }>`
        SELECT id, label FROM picker_items ORDER BY id`
      expect(rows).toEqual([{ id: 1, label: "a" }, { id: 2, label: "b" }])
    }))

  it.effect("runs 50 concurrent queries and transactions without errors", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE picker_counter (id integer PRIMARY KEY, n integer NOT NULL)`
      yield* sql`INSERT INTO picker_counter (id, n) VALUES (1, 0)`
      const results = yield* Effect.forEach(
        Array.from({ length: 50 }, (_, i) => i),
        (i): Effect.Effect<number | string | undefined, SqlError.SqlError> =>
          i % 2 === 0
            ? sql.withTransaction(
              Effect.gen(function*() {
                yield* sql`UPDATE picker_counter SET n = n + 1 WHERE id = 1`
                const [row] = yield* sql<{ readonly echo: number }>`SELECT ${i}::int AS echo`
                return row?.echo
              })
            )
            : Effect.map(sql<{ readonly echo: string }>`SELECT ${`v${i}`}::text AS echo`, ([row]) => row?.echo),
        { concurrency: "unbounded" }
      )
      expect(results).toEqual(Array.from({ length: 50 }, (_, i) => (i % 2 === 0 ? i : `v${i}`)))
      const [counter] = yield* sql<{ readonly n: number }>`SELECT n FROM picker_counter WHERE id = 1`
      expect(counter?.n).toBe(25)
    }))

  it.effect("rolls back a failed transaction", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE picker_rollback (id integer PRIMARY KEY)`
      const failed = yield* sql.withTransaction(
        Effect.andThen(sql`INSERT INTO picker_rollback (id) VALUES (1)`, Effect.fail("boom" as const))
      ).pipe(Effect.flip)
      expect(failed).toBe("boom")
      const rows = yield* sql`SELECT id FROM picker_rollback`
      expect(rows).toEqual([])
    }))
})

describe("test database isolation", () => {
  it.live("gives each acquisition its own database", () =>
    Effect.gen(function*() {
      const probe = Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE isolation_probe (id integer)`
        return (yield* TestDatabaseInfo).url
      })
      const [a, b] = yield* Effect.all([
        Effect.provide(probe, TestDatabaseLive),
        Effect.provide(probe, TestDatabaseLive)
      ], { concurrency: 2 })
      expect(a).not.toBe(b)
    }), 60_000)
})
