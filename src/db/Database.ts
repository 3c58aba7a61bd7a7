/**
 * The SQL layer: PostgreSQL at DATABASE_URL, or, without one, the embedded PostgreSQL server that
 * the project starts itself (src/db/EmbeddedPostgres.ts). Both hand out the same `PgClient` (no name
 * transforms: columns are snake_case and mapped explicitly), over a pool whose every wait is bounded
 * (src/db/PgPool.ts), so a failing database turns into quick errors (503 at the HTTP edge), not hangs.
 */
import type { PgClient } from "@effect/sql-pg"
import { Context, Duration, Effect, Layer, Option, Redacted } from "effect"
import type { SqlClient } from "effect/sql"
import { ConnectionError, SqlError } from "effect/sql/SqlError"
import { resolve } from "node:path"
import { startEmbeddedPostgres } from "./EmbeddedPostgres.ts"
import type { DatabasePressure } from "./DatabasePressure.ts"
import { MigrationsLive } from "./Migrations.ts"
import { makePool } from "./PgPool.ts"
import { isConnectTimeout } from "./PoolMetrics.ts"
import { layerFromPool, pgError } from "./PgSqlClient.ts"

export const POOL_SIZE = 10
const APPLICATION_NAME = "cop-integrations"

export interface DatabaseTimeoutsShape {
  /** Opening a connection, and waiting for a free one when the pool is busy. */
  readonly connect: Duration.Input
  /** One statement on the server (statement_timeout). Longer than the Idempotency-Key wait (10 s). */
  readonly statement: Duration.Input
  /** Waiting for a lock (lock_timeout); the Idempotency-Key claim sets its own wait. */
  readonly lock: Duration.Input
  /** A transaction left idle this long is ended by the server (idle_in_transaction_session_timeout). */
  readonly idleInTransaction: Duration.Input
  /** No answer at all for this long (a stalled connection): the statement fails, the connection is dropped. */
  readonly query: Duration.Input
  /** First TCP keepalive probe on an idle socket. */
  readonly keepAliveDelay: Duration.Input
}

/** The database timeouts; tests provide shorter ones. */
export const DatabaseTimeouts = Context.Reference<DatabaseTimeoutsShape>("DatabaseTimeouts", {
  defaultValue: () => ({
    connect: "5 seconds",
    statement: "15 seconds",
    lock: "5 seconds",
    idleInTransaction: "30 seconds",
    query: "20 seconds",
    keepAliveDelay: "10 seconds"
  })
})

export interface DatabaseOptions {
  readonly url: Option.Option<Redacted.Redacted<string>>
  /** Data directory of the embedded server (created and initialised when missing). */
  readonly embeddedDataDir: string
  /** Prepare statements with parameters once per connection (default: true, false behind a pooler; src/db/PgPool.ts). */
  readonly preparedStatements?: boolean | undefined
  /** What stands between the service and PostgreSQL at `url` (default none; see DatabasePooler). */
  readonly pooler?: DatabasePooler
  /** PostgreSQL itself, not through the pooler: where LISTEN connects (DATABASE_DIRECT_URL). */
  readonly directUrl?: Option.Option<Redacted.Redacted<string>>
}

/**
 * `transaction`: a pooler in transaction mode (PgBouncer, as managed PostgreSQL offerings run it) hands each
 * transaction, or each statement outside one, whichever server connection is free, so nothing may rely on a session:
 * - no named prepared statements (PgBouncer before 1.21 passes them to whichever server connection is free: "prepared
 *   statement ... does not exist", or "already exists");
 * - no timeouts in the startup packet (PgBouncer refuses the session: "unsupported startup parameter"): every
 *   transaction begins with SET LOCAL of each; a statement outside a transaction is bounded by the client's read
 *   timeout, and by the role's own settings when the operator sets them (ALTER ROLE ... SET statement_timeout);
 * - cancel by the protocol's CancelRequest, which the pooler forwards, not by a backend pid;
 * - LISTEN over the direct URL, or not at all (a LISTEN through the pooler succeeds but hears nothing).
 * Advisory locks are all transaction-scoped (pg_advisory_xact_lock and its try and shared forms), which a transaction
 * pooler keeps: the transaction holds its server connection until it ends. Migrations run in one transaction.
 */
export type DatabasePooler = "none" | "transaction"

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

const millis = (duration: Duration.Input) => Math.max(1, Math.round(Duration.toMillis(duration)))

/** A new pool (ended with the scope) that has answered one query within the connect timeout. */
const acquirePool = (url: Redacted.Redacted<string>, session: SessionSettings) =>
  Effect.gen(function*() {
    const timeouts = yield* DatabaseTimeouts
    const pool = yield* Effect.acquireRelease(
      Effect.sync(() =>
        makePool({
          url: Redacted.value(url),
          size: POOL_SIZE,
          applicationName: APPLICATION_NAME,
          connectTimeoutMs: millis(timeouts.connect),
          statementTimeoutMs: millis(timeouts.statement),
          lockTimeoutMs: millis(timeouts.lock),
          idleInTransactionTimeoutMs: millis(timeouts.idleInTransaction),
          queryTimeoutMs: millis(timeouts.query),
          keepAliveDelayMs: millis(timeouts.keepAliveDelay),
          prepare: session.prepare,
          timeoutsAtStartup: session.pooler === "none"
        })
      ),
      (pool) => Effect.promise(() => pool.end()).pipe(Effect.interruptible, Effect.timeoutOption("1 second"))
    )
    yield* Effect.tryPromise({
      try: () => pool.query("SELECT 1"),
      catch: (cause) =>
        isConnectTimeout(cause) ? connectTimedOut() : pgError(cause, "PgClient: Failed to connect", "connect")
    }).pipe(Effect.timeoutOrElse({ duration: timeouts.connect, orElse: () => Effect.fail(connectTimedOut()) }))
    return pool
  })

/**
 * pg's own connect timeout (connectionTimeoutMillis) and the one above have the same length, so either may fire
 * first; both read the same.
 */
const connectTimedOut = () =>
  new SqlError({
    reason: new ConnectionError({
      cause: new Error("Connection timed out"),
      message: "PgClient: Connection timed out",
      operation: "connect"
    })
  })

/** How the pool's sessions are set up, from the options. */
interface SessionSettings {
  readonly prepare: boolean
  readonly pooler: DatabasePooler
  readonly directUrl: Option.Option<Redacted.Redacted<string>>
}

const sessionSettings = (options: DatabaseOptions): SessionSettings => {
  const pooler = options.pooler ?? "none"
  return {
    pooler,
    prepare: options.preparedStatements ?? pooler === "none",
    directUrl: options.directUrl ?? Option.none()
  }
}

/** Opens every transaction behind a transaction pooler: one round trip, the timeouts local to the transaction. */
const beginWithTimeouts = (timeouts: DatabaseTimeoutsShape) =>
  [
    "BEGIN",
    `SET LOCAL statement_timeout = ${millis(timeouts.statement)}`,
    `SET LOCAL lock_timeout = ${millis(timeouts.lock)}`,
    `SET LOCAL idle_in_transaction_session_timeout = ${millis(timeouts.idleInTransaction)}`
  ].join("; ")

/** Said once at start-up: what runs differently behind the pooler. */
const announcePooler = (session: SessionSettings) =>
  Effect.logInfo(
    `database: behind a pooler in transaction mode: prepared statements ${
      session.prepare ? "on" : "off"
    }, timeouts set per transaction, ${
      Option.match(session.directUrl, {
        onSome: (direct) => `LISTEN over DATABASE_DIRECT_URL (${redactUrl(Redacted.value(direct))})`,
        onNone: () => "no DATABASE_DIRECT_URL to LISTEN on"
      })
    }`
  )

const clientLayer = (url: Redacted.Redacted<string>, session: SessionSettings) =>
  Layer.unwrap(Effect.gen(function*() {
    const timeouts = yield* DatabaseTimeouts
    const behindPooler = session.pooler === "transaction"
    if (behindPooler) yield* announcePooler(session)
    return layerFromPool(acquirePool(url, session), {
      applicationName: APPLICATION_NAME,
      pooler: behindPooler ? { begin: beginWithTimeouts(timeouts) } : undefined,
      listen: Option.match(session.directUrl, {
        onSome: (direct) => ({ url: Redacted.value(direct) }),
        onNone: () => (behindPooler ? "nowhere" : "pool")
      })
    })
  }))

/** The pool is closed before the server is stopped (finalizers run in reverse order). */
const embeddedLayer = (dataDir: string, session: SessionSettings) =>
  Layer.unwrap(
    Effect.gen(function*() {
      const server = yield* Effect.acquireRelease(
        Effect.tryPromise({
          try: () => startEmbeddedPostgres(dataDir),
          catch: (cause) => pgError(cause, "Failed to start the embedded PostgreSQL", "connect")
        }),
        (server) => Effect.promise(server.stop)
      )
      const joined = server.owned ? "" : ", joined the server already running there"
      const placed = server.dataDir === resolve(dataDir)
        ? ""
        : ` (linked from ${dataDir}: the 'postgres' user cannot reach it)`
      yield* Effect.logInfo(
        `${
          describeDatabase({ backend: "embedded", target: server.dataDir })
        }${placed} on 127.0.0.1:${server.port}${joined}`
      )
      return clientLayer(Redacted.make(server.url), session)
    })
  )

export const makeSqlLayer = (
  options: DatabaseOptions
): Layer.Layer<PgClient.PgClient | SqlClient.SqlClient | DatabasePressure, SqlError> => {
  const session = sessionSettings(options)
  return Option.match(options.url, {
    onSome: (url) =>
      clientLayer(url, session).pipe(Layer.tap(() => Effect.logInfo(describeDatabase(databaseInfo(options))))),
    onNone: () => embeddedLayer(options.embeddedDataDir, session)
  })
}

/** The database settings of the configuration (src/config/Config.ts reads them). */
export interface DatabaseSettings {
  readonly databaseUrl: Option.Option<Redacted.Redacted<string>>
  readonly embeddedDataDir: string
  /** None: on, unless behind a pooler. */
  readonly databasePreparedStatements: Option.Option<boolean>
  readonly databasePooler: DatabasePooler
  readonly databaseDirectUrl: Option.Option<Redacted.Redacted<string>>
}

/** PostgreSQL (DATABASE_URL, else an embedded server), migrated before anything else uses it. */
export const databaseLayer = (config: DatabaseSettings) => {
  const sql = makeSqlLayer({
    url: config.databaseUrl,
    embeddedDataDir: config.embeddedDataDir,
    preparedStatements: Option.getOrUndefined(config.databasePreparedStatements),
    pooler: config.databasePooler,
    directUrl: config.databaseDirectUrl
  })
  // One reference to `sql`: v4 memoizes the layer itself, not what `Layer.tap` adds to it (its log line ran twice).
  return MigrationsLive.pipe(Layer.provideMerge(sql))
}
