/**
 * Test database picker. Every test file that needs a database gets its own, on a real PostgreSQL:
 *
 *   1. TEST_DATABASE_URL set        → a fresh `t_<random>` database on that server (CI sets it; so
 *                                     does ./globalSetup.ts, after starting one embedded server or,
 *                                     with TEST_DATABASE_DOCKER=1 and a Docker engine, a container)
 *   2. otherwise (a file run alone)  → a throw-away embedded PostgreSQL server of its own
 *
 * `url` is always a real connection URL, so tests can also start the app in other processes against
 * the same database.
 */
import { PgClient } from "@effect/sql-pg"
import { Context, Effect, Layer, Option, Redacted } from "effect"
import type { SqlClient } from "effect/sql"
import { randomBytes } from "node:crypto"
import { makeSqlLayer } from "../../src/db/Database.ts"
import { MigrationsLive } from "../../src/db/Migrations.ts"
import { startThrowawayPostgres } from "../../src/db/EmbeddedPostgres.ts"

export type TestDatabaseKind = "postgres" | "docker" | "embedded"

export interface TestDatabase {
  readonly url: string
  readonly kind: TestDatabaseKind
  readonly layer: Layer.Layer<PgClient.PgClient | SqlClient.SqlClient>
  readonly release: () => Promise<void>
}

const log = (line: string) => process.stderr.write(`[test-db] ${line}\n`)

/** The app's own SQL layer, pointed at `url`. */
export const sqlLayerFor = (url: string): Layer.Layer<PgClient.PgClient | SqlClient.SqlClient> =>
  makeSqlLayer({ url: Option.some(Redacted.make(url)), embeddedDataDir: "unused" }).pipe(Layer.orDie)

/** Runs `f` on a short-lived single-connection client to the server at `url`. */
const withAdminClient = <A>(
  url: string,
  f: (sql: PgClient.PgClient) => Effect.Effect<A, unknown>
): Promise<A> =>
  Effect.runPromise(
    Effect.flatMap(PgClient.PgClient, f).pipe(
      Effect.provide(PgClient.layer({ url: Redacted.make(url), maxConnections: 1 }))
    )
  )

const withDatabaseName = (serverUrl: string, database: string): string => {
  const url = new URL(serverUrl)
  url.pathname = `/${database}`
  return url.toString()
}

const dropDatabase = (name: string) => (sql: PgClient.PgClient) =>
  Effect.gen(function*() {
    const [row] = yield* sql<{ readonly version: number }>`SELECT current_setting('server_version_num')::int AS version`
    if ((row?.version ?? 0) >= 130000) {
      yield* sql`DROP DATABASE IF EXISTS ${sql(name)} WITH (FORCE)`
    } else {
      yield* sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = ${name} AND pid <> pg_backend_pid()`
      yield* sql`DROP DATABASE IF EXISTS ${sql(name)}`
    }
  })

/** A new, empty database on an existing server; dropped on release. */
const isolatedDatabase = async (serverUrl: string, kind: TestDatabaseKind): Promise<TestDatabase> => {
  const name = `t_${randomBytes(6).toString("hex")}`
  await withAdminClient(serverUrl, (sql) => sql`CREATE DATABASE ${sql(name)}`)
  const url = withDatabaseName(serverUrl, name)
  return {
    url,
    kind,
    layer: sqlLayerFor(url),
    release: () => withAdminClient(serverUrl, dropDatabase(name))
  }
}

const serverKind = (): TestDatabaseKind => {
  const kind = process.env["TEST_DATABASE_KIND"]
  return kind === "docker" || kind === "embedded" ? kind : "postgres"
}

export const acquireTestDatabase = async (): Promise<TestDatabase> => {
  const serverUrl = process.env["TEST_DATABASE_URL"]
  if (serverUrl) return isolatedDatabase(serverUrl, serverKind())
  log("no TEST_DATABASE_URL and no global setup: starting a throw-away embedded PostgreSQL for this file")
  const server = await startThrowawayPostgres()
  try {
    const database = await isolatedDatabase(server.url, "embedded")
    return {
      ...database,
      release: async () => {
        await database.release()
        await server.stop()
      }
    }
  } catch (error) {
    await server.stop()
    throw error
  }
}

/** What the picked database is, for tests that need the URL (e.g. to start the app in another process). */
export class TestDatabaseInfo extends Context.Service<
  TestDatabaseInfo,
  { readonly url: string; readonly kind: TestDatabaseKind }
>()("test/TestDatabaseInfo") {}

/**
 * Scoped flavour for @effect/vitest: `layer(TestDatabaseLive)(...)` or
 * `Effect.provide(TestDatabaseLive)` gives a fresh database per build.
 * The pool is closed before the database is released.
 */
export const TestDatabaseLive: Layer.Layer<TestDatabaseInfo | PgClient.PgClient | SqlClient.SqlClient> = Layer
  .unwrap(
    Effect.acquireRelease(
      Effect.promise(acquireTestDatabase),
      (database) => Effect.promise(database.release)
    ).pipe(
      Effect.map((database) =>
        Layer.merge(Layer.succeed(TestDatabaseInfo, { url: database.url, kind: database.kind }), database.layer)
      )
    )
  )

/** `TestDatabaseLive` with the app's migrations run: the schema every repository expects, and no rows. */
export const TestDatabaseMigrated: Layer.Layer<TestDatabaseInfo | PgClient.PgClient | SqlClient.SqlClient> =
  MigrationsLive.pipe(Layer.orDie, Layer.provideMerge(TestDatabaseLive))
