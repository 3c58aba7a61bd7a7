/**
 * The SQL layer: PostgreSQL at DATABASE_URL, or, without one, the embedded PostgreSQL server that
 * the project starts itself (src/db/EmbeddedPostgres.ts). Both hand out the same `PgClient` (no name
 * transforms: columns are snake_case and mapped explicitly).
 */
import type { SqlClient } from "@effect/sql"
import { SqlError } from "@effect/sql/SqlError"
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Option, Redacted } from "effect"
import { startEmbeddedPostgres } from "./EmbeddedPostgres.ts"

export const POOL_SIZE = 10
const APPLICATION_NAME = "cop-integrations"

export interface DatabaseOptions {
  readonly url: Option.Option<Redacted.Redacted<string>>
  /** Data directory of the embedded server (created and initialised when missing). */
  readonly embeddedDataDir: string
}

export interface DatabaseInfo {
  readonly backend: "postgres" | "embedded"
  /** Password-free URL (postgres) or the data directory (embedded). */
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
    onNone: (): DatabaseInfo => ({ backend: "embedded", target: options.embeddedDataDir })
  })

export const describeDatabase = (info: DatabaseInfo): string =>
  info.backend === "postgres"
    ? `database: postgres at ${info.target}`
    : `database: embedded PostgreSQL (data dir ${info.target})`

const clientLayer = (url: Redacted.Redacted<string>) =>
  PgClient.layer({ url, maxConnections: POOL_SIZE, applicationName: APPLICATION_NAME })

/** The pool is closed before the server is stopped (finalizers run in reverse order). */
const embeddedLayer = (dataDir: string) =>
  Layer.unwrapScoped(
    Effect.gen(function*() {
      const server = yield* Effect.acquireRelease(
        Effect.tryPromise({
          try: () => startEmbeddedPostgres(dataDir),
          catch: (cause) => new SqlError({ cause, message: "Failed to start the embedded PostgreSQL" })
        }),
        (server) => Effect.promise(server.stop)
      )
      const joined = server.owned ? "" : ", joined the server already running there"
      yield* Effect.logInfo(`${describeDatabase({ backend: "embedded", target: dataDir })} on 127.0.0.1:${server.port}${joined}`)
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
