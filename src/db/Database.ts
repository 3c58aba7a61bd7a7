/**
 * The SQL layer: a real PostgreSQL server when a URL is configured, otherwise an
 * embedded PGlite served over a local socket. Both paths hand out the same
 * `PgClient` (no name transforms: columns are snake_case and mapped explicitly).
 */
import { PGlite } from "@electric-sql/pglite"
import type { SqlClient } from "@effect/sql"
import { SqlError } from "@effect/sql/SqlError"
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Option, Redacted, type Scope } from "effect"
import { mkdir } from "node:fs/promises"
import { servePglite } from "./PgliteServer.ts"

export const POOL_SIZE = 10
const APPLICATION_NAME = "cop-integrations"

export interface DatabaseOptions {
  readonly url: Option.Option<Redacted.Redacted<string>>
  /** A directory (created if missing) or `memory://` for a throw-away database. */
  readonly embeddedDataDir: string
}

export interface DatabaseInfo {
  readonly backend: "postgres" | "pglite"
  /** Password-free URL (postgres) or the data directory (pglite). */
  readonly target: string
}

/** `postgres://user:secret@host/db?x` → `postgres://user@host/db` (never prints a password). */
export const redactUrl = (url: string): string => {
  try {
    const parsed = new URL(url)
    return `${parsed.protocol}//${parsed.username ? `${parsed.username}@` : ""}${parsed.host}${parsed.pathname}`
  } catch {
    return "<unparseable database url>"
  }
}

export const databaseInfo = (options: DatabaseOptions): DatabaseInfo =>
  Option.match(options.url, {
    onSome: (url): DatabaseInfo => ({ backend: "postgres", target: redactUrl(Redacted.value(url)) }),
    onNone: (): DatabaseInfo => ({ backend: "pglite", target: options.embeddedDataDir })
  })

export const describeDatabase = (info: DatabaseInfo): string =>
  info.backend === "postgres"
    ? `database: postgres at ${info.target}`
    : `database: embedded pglite (data dir ${info.target})`

const clientLayer = (url: Redacted.Redacted<string>) =>
  PgClient.layer({ url, maxConnections: POOL_SIZE, applicationName: APPLICATION_NAME })

const hasScheme = (dataDir: string) => /^[a-z][a-z0-9+.-]*:\/\//i.test(dataDir)

const acquirePglite = (dataDir: string): Effect.Effect<PGlite, SqlError, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: async () => {
        if (!hasScheme(dataDir)) await mkdir(dataDir, { recursive: true })
        return await PGlite.create(dataDir)
      },
      catch: (cause) => new SqlError({ cause, message: `Failed to start embedded PGlite (${dataDir})` })
    }),
    (db) => Effect.promise(() => db.close())
  )

/**
 * PGlite is a single backend session. `servePglite` lends it to one connection
 * at a time and switches only between transactions, so the usual pool works;
 * queries still execute one after another.
 * Release order (reverse of acquisition): pool → socket server → PGlite.
 */
const embeddedLayer = (dataDir: string) =>
  Layer.unwrapScoped(
    Effect.gen(function*() {
      const db = yield* acquirePglite(dataDir)
      const server = yield* servePglite(db)
      const info = describeDatabase({ backend: "pglite", target: dataDir })
      yield* Effect.logInfo(`${info}, served on ${server.host}:${server.port}`)
      return clientLayer(Redacted.make(server.url))
    })
  )

export const makeSqlLayer = (
  options: DatabaseOptions
): Layer.Layer<PgClient.PgClient | SqlClient.SqlClient, SqlError> =>
  Option.match(options.url, {
    onSome: (url) =>
      clientLayer(url).pipe(Layer.tap(() => Effect.logInfo(describeDatabase(databaseInfo(options))))),
    onNone: () => embeddedLayer(options.embeddedDataDir)
  })
