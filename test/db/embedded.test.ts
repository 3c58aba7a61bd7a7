/**
 * The `npm start` default: no DATABASE_URL → embedded PGlite behind a local
 * socket. Runs regardless of TEST_DATABASE_URL.
 */
import { SqlClient, type SqlError } from "@effect/sql"
import { describe, expect, it, layer } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { makeSqlLayer } from "../../src/db/Database.ts"
import { MigrationsLive, runMigrations } from "../../src/db/Migrations.ts"

const embedded = (embeddedDataDir: string) => makeSqlLayer({ url: Option.none(), embeddedDataDir })

const migratedInMemory = MigrationsLive.pipe(Layer.provideMerge(embedded("memory://")))

layer(migratedInMemory, { timeout: "60 seconds", excludeTestServices: true })("embedded PGlite (memory://)", (it) => {
  it.effect("is migrated and idempotent", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const [row] = yield* sql<{ readonly found: boolean }>`SELECT to_regclass('integrations') IS NOT NULL AS found`
      expect(row?.found).toBe(true)
      expect(yield* runMigrations).toEqual([])
    }))

  it.effect("serves 50 concurrent parameterised queries and transactions", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE embedded_counter (id integer PRIMARY KEY, n integer NOT NULL)`
      yield* sql`INSERT INTO embedded_counter (id, n) VALUES (1, 0)`
      const results = yield* Effect.forEach(
        Array.from({ length: 50 }, (_, i) => i),
        (i): Effect.Effect<string, SqlError.SqlError> =>
          i % 2 === 0
            ? sql.withTransaction(
              Effect.gen(function*() {
                const [before] = yield* sql<{ readonly n: number }>`SELECT n FROM embedded_counter WHERE id = ${1}`
                yield* sql`UPDATE embedded_counter SET n = ${(before?.n ?? 0) + 1} WHERE id = ${1}`
                const [row] = yield* sql<{ readonly echo: string }>`SELECT ${`tx${i}`}::text AS echo`
                return row?.echo ?? "missing"
              })
            )
            : Effect.map(sql<{ readonly echo: string }>`SELECT ${`q${i}`}::text AS echo`, ([row]) => row?.echo ?? "missing"),
        { concurrency: "unbounded" }
      )
      expect(results).toEqual(Array.from({ length: 50 }, (_, i) => (i % 2 === 0 ? `tx${i}` : `q${i}`)))
      // read-modify-write without row locks: only correct because transactions never interleave
      const [counter] = yield* sql<{ readonly n: number }>`SELECT n FROM embedded_counter WHERE id = 1`
      expect(counter?.n).toBe(25)
    }))

  it.effect("an interrupted query does not wedge the database", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const timedOut = yield* sql`SELECT pg_sleep(0.3)`.pipe(Effect.timeout("20 millis"), Effect.option)
      expect(Option.isNone(timedOut)).toBe(true)
      const rows = yield* sql<{ readonly ok: number }>`SELECT 1 AS ok`.pipe(Effect.timeout("5 seconds"))
      expect(rows).toEqual([{ ok: 1 }])
    }))
})

describe("embedded PGlite on disk", () => {
  it.live("creates the data directory and keeps data across restarts", () =>
    Effect.acquireUseRelease(
      Effect.promise(() => mkdtemp(join(tmpdir(), "pglite-test-"))),
      (root) =>
        Effect.gen(function*() {
          const dataDir = join(root, "nested", "data")
          yield* Effect.flatMap(SqlClient.SqlClient, (sql) =>
            Effect.zipRight(
              sql`CREATE TABLE kept (v text)`,
              sql`INSERT INTO kept (v) VALUES (${"still here"})`
            )).pipe(Effect.provide(embedded(dataDir)))
          const rows = yield* Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT v FROM kept`).pipe(
            Effect.provide(embedded(dataDir))
          )
          expect(rows).toEqual([{ v: "still here" }])
        }),
      (root) => Effect.promise(() => rm(root, { recursive: true, force: true }))
    ), 60_000)
})
