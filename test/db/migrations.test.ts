import { describe, expect, it, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { execFile } from "node:child_process"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { migrateWith, MIGRATIONS_TABLE, runMigrations } from "../../src/db/Migrations.ts"
import { migrations } from "../../src/db/migrations/index.ts"
import { sqlLayerFor, TestDatabaseInfo, TestDatabaseLive } from "../support/database.ts"

const latestIds = Object.keys(migrations).map((key) => Number(key.split("_")[0]))
const expectedApplied = Object.keys(migrations).map((key) => {
  const [id, ...name] = key.split("_")
  return [Number(id), name.join("_")]
})

const tableExists = (name: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      Effect.map(sql<{ readonly found: boolean }>`SELECT to_regclass(${name}) IS NOT NULL AS found`, ([row]) =>
        row?.found === true)
  )

const recordedIds = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.map(
    sql<{ readonly migration_id: number }>`SELECT migration_id FROM ${sql(MIGRATIONS_TABLE)} ORDER BY migration_id`,
    (rows) => rows.map((row) => row.migration_id)
  ))

layer(TestDatabaseLive, { timeout: "60 seconds", excludeTestServices: true })("migrations", (it) => {
  it.effect("apply once; a second run is a no-op", () =>
    Effect.gen(function*() {
      expect(yield* runMigrations).toEqual(expectedApplied)
      expect(yield* runMigrations).toEqual([])
      expect(yield* recordedIds).toEqual(latestIds)
      expect(yield* tableExists("integrations")).toBe(true)
    }))

  it.effect("a failing migration is a typed MigrationError and is rolled back entirely", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const error = yield* migrateWith({
        ...migrations,
        "9001_half_done": sql`CREATE TABLE half_done (id integer)`,
        "9002_broken": sql`SELECT * FROM no_such_table`
      }).pipe(Effect.flip)
      expect(error._tag).toBe("MigrationError")
      expect(error.message).toContain("9002_broken")
      expect(yield* tableExists("half_done")).toBe(false)
      expect(yield* recordedIds).toEqual(latestIds)
    }))
})

describe("concurrent migration runs", () => {
  it.live(
    "independent pools against one fresh database all succeed; exactly one applies",
    () =>
      Effect.gen(function*() {
        const { url } = yield* TestDatabaseInfo
        const results = yield* Effect.all(
          Array.from({ length: 4 }, () => Effect.provide(runMigrations, sqlLayerFor(url))),
          { concurrency: "unbounded" }
        )
        expect(results.filter((applied) => applied.length > 0)).toEqual([expectedApplied])
        expect(yield* Effect.provide(recordedIds, sqlLayerFor(url))).toEqual(latestIds)
      }).pipe(Effect.provide(TestDatabaseLive)),
    60_000
  )

  it.live("separate processes started at once all succeed; exactly one applies", () =>
    Effect.gen(function*() {
      const { url } = yield* TestDatabaseInfo
      const cli = fileURLToPath(new URL("../support/migrate-cli.ts", import.meta.url))
      const outputs = yield* Effect.all(
        Array.from({ length: 2 }, () =>
          Effect.promise(() => promisify(execFile)(process.execPath, ["--import", "tsx", cli, url]))),
        { concurrency: "unbounded" }
      )
      const results = outputs.map(({ stdout }) =>
        JSON.parse(stdout.trim()) as unknown
      )
      expect(results.filter((applied) => Array.isArray(applied) && applied.length > 0)).toEqual([expectedApplied])
    }).pipe(Effect.provide(TestDatabaseLive)), 60_000)
})
