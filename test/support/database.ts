/**
 * Test database picker. Every test file that needs a database gets its own:
 *
 *   1. TEST_DATABASE_URL set     → a fresh `t_<random>` database on that server
 *   2. a Docker engine answers   → a postgres:16-alpine container (testcontainers),
 *                                  one per test file; or, with ./globalSetup.ts
 *                                  wired into vitest, one per run (then it is case 1)
 *   3. otherwise                 → an in-memory PGlite served on a local socket
 *
 * `url` is always a real connection URL, so tests can also start the app in
 * other processes against the same database.
 */
import type { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Context, Effect, Layer, Option, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import { makeSqlLayer, redactUrl } from "../../src/db/Database.ts"
import { startPgliteServer } from "../../src/db/PgliteServer.ts"
import { POSTGRES_IMAGE, probeDocker, startPostgresContainer } from "./docker.ts"
import { createMemoryPglite } from "./pglite.ts"

export type TestDatabaseKind = "postgres" | "docker" | "pglite"

export interface TestDatabase {
  readonly url: string
  readonly kind: TestDatabaseKind
  readonly layer: Layer.Layer<PgClient.PgClient | SqlClient.SqlClient>
  readonly release: () => Promise<void>
}

const log = (line: string) => process.stderr.write(`[test-db] ${line}\n`)

/** The app's own SQL layer, pointed at `url`. */
export const sqlLayerFor = (url: string): Layer.Layer<PgClient.PgClient | SqlClient.SqlClient> =>
  makeSqlLayer({ url: Option.some(Redacted.make(url)), embeddedDataDir: "memory://" }).pipe(Layer.orDie)

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
const isolatedDatabase = async (serverUrl: string, kind: "postgres" | "docker"): Promise<TestDatabase> => {
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

const dockerDatabase = async (): Promise<TestDatabase> => {
  const container = await startPostgresContainer()
  return { url: container.url, kind: "docker", layer: sqlLayerFor(container.url), release: container.stop }
}

const pgliteDatabase = async (): Promise<TestDatabase> => {
  const db = await createMemoryPglite()
  try {
    const server = await startPgliteServer(db)
    return {
      url: server.url,
      kind: "pglite",
      layer: sqlLayerFor(server.url),
      release: async () => {
        await server.stop()
        await db.close()
      }
    }
  } catch (error) {
    await db.close()
    throw error
  }
}

export const acquireTestDatabase = async (): Promise<TestDatabase> => {
  const serverUrl = process.env["TEST_DATABASE_URL"]
  if (serverUrl) {
    // TEST_DATABASE_KIND=docker: the URL points at the container started by ./globalSetup.ts
    const kind = process.env["TEST_DATABASE_KIND"] === "docker" ? "docker" : "postgres"
    const database = await isolatedDatabase(serverUrl, kind)
    log(`using TEST_DATABASE_URL ${redactUrl(serverUrl)} (${kind}, database ${new URL(database.url).pathname.slice(1)})`)
    return database
  }
  const docker = await probeDocker()
  if (docker.available) {
    log(`no TEST_DATABASE_URL: starting ${POSTGRES_IMAGE} with testcontainers`)
    return dockerDatabase()
  }
  const database = await pgliteDatabase()
  log(`no TEST_DATABASE_URL and no Docker engine (${docker.reason}): embedded PGlite at ${database.url}`)
  return database
}

/** What the picked database is, for tests that need the URL (e.g. to start the app in another process). */
export class TestDatabaseInfo extends Context.Tag("test/TestDatabaseInfo")<
  TestDatabaseInfo,
  { readonly url: string; readonly kind: TestDatabaseKind }
>() {}

/**
 * Scoped flavour for @effect/vitest: `layer(TestDatabaseLive)(...)` or
 * `Effect.provide(TestDatabaseLive)` gives a fresh database per build.
 * The pool is closed before the database is released.
 */
export const TestDatabaseLive: Layer.Layer<TestDatabaseInfo | PgClient.PgClient | SqlClient.SqlClient> = Layer
  .unwrapScoped(
    Effect.acquireRelease(
      Effect.promise(acquireTestDatabase),
      (database) => Effect.promise(database.release)
    ).pipe(
      Effect.map((database) =>
        Layer.merge(Layer.succeed(TestDatabaseInfo, { url: database.url, kind: database.kind }), database.layer)
      )
    )
  )
