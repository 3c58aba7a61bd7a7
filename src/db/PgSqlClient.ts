/**
 * effect/sql's client over a `pg` pool (src/db/PgPool.ts), the way @effect/sql-pg built it before its 4.0 driver.
 *
 * @effect/sql-pg 4 speaks the wire protocol itself, and cannot give what PgPool.ts does with `pg`: a client-side read
 * timeout that fails a statement left unanswered and drops its connection, an error remembered as raised while a
 * session was opening (failedWhileOpening), and `pg`'s own row parsing (Date for timestamptz, text for int8 and
 * numeric), which every repository's schema reads. So the driver stays `pg` and only the Effect side is v4.
 *
 * A statement outside a transaction borrows a pool client for its one round trip (no scope per statement); an
 * interrupted statement is cancelled on the server (best effort: `pg_cancel_backend`, or behind a pooler the
 * protocol's CancelRequest) before its client goes back, and PgPool.ts drops a client released with an unanswered
 * query. A transaction holds one client until it ends.
 */
import { PgClient } from "@effect/sql-pg"
import type { Notification } from "@effect/sql-pg/PgConnection"
import { Cause, Context, Effect, Layer, Queue, Scope, Stream } from "effect"
import * as Reactivity from "effect/reactivity/Reactivity"
import { SqlClient, type SqlConnection, Statement } from "effect/sql"
import {
  AuthenticationError,
  AuthorizationError,
  ConnectionError,
  ConstraintError,
  DeadlockError,
  LockTimeoutError,
  SerializationError,
  SqlError,
  type SqlErrorReason,
  SqlSyntaxError,
  StatementTimeoutError,
  UniqueViolation,
  UnknownError
} from "effect/sql/SqlError"
import { connect } from "node:net"
import { Client, type ClientConfig, escapeIdentifier, type Pool, type PoolClient, type QueryResult } from "pg"
import { DatabasePressure } from "./DatabasePressure.ts"
import { failedWhileOpening, oldestWaitMs } from "./PgPool.ts"
import { noteAcquireFailure, observeStatement, type StatementKind, watchPool } from "./PoolMetrics.ts"

const codeOf = (cause: unknown): string | undefined =>
  typeof cause === "object" && cause !== null && "code" in cause && typeof cause.code === "string"
    ? cause.code
    : undefined

/** The v4 reason for a `pg` error, by SQLSTATE as @effect/sql-pg classifies them; a failed open is a ConnectionError. */
const reasonFor = (cause: unknown, message: string, operation: string): SqlErrorReason => {
  const props = { cause, message, operation }
  const code = codeOf(cause) ?? ""
  if (code.startsWith("28")) return new AuthenticationError(props)
  // A session that could not open, SQLSTATE class 08, or a socket's errno (ECONNRESET …).
  if (failedWhileOpening(cause) || code.startsWith("08") || /^E[A-Z]+$/.test(code)) return new ConnectionError(props)
  if (code === "42501") return new AuthorizationError(props)
  if (code.startsWith("42")) return new SqlSyntaxError(props)
  if (code === "23505") {
    const constraint = typeof cause === "object" && cause !== null && "constraint" in cause
      ? cause.constraint
      : undefined
    return new UniqueViolation({ ...props, constraint: typeof constraint === "string" ? constraint : "unknown" })
  }
  if (code.startsWith("23")) return new ConstraintError(props)
  if (code === "40P01") return new DeadlockError(props)
  if (code === "40001") return new SerializationError(props)
  if (code === "55P03") return new LockTimeoutError(props)
  if (code === "57014") return new StatementTimeoutError(props)
  return new UnknownError(props)
}

/** An SqlError for a failure of `pg`; the driver's error is `reason.cause`. */
export const pgError = (cause: unknown, message: string, operation: string): SqlError =>
  new SqlError({ reason: reasonFor(cause, message, operation) })

type Resume<A> = (effect: Effect.Effect<A, SqlError>) => void
/** Sends one query on `client`; calls back once with its outcome. */
type Send<A> = (client: PoolClient, resume: Resume<A>) => void

/** `send`, its duration observed from sending to the answer. */
const timed = <A>(kind: StatementKind, send: Send<A>): Send<A> => (client, resume) => {
  const started = performance.now()
  send(client, (outcome) => {
    observeStatement(kind, (performance.now() - started) / 1000)
    resume(outcome)
  })
}

/** How an interrupted statement is cancelled on the server (best effort: given up after 5 s). */
type Cancel = (client: PoolClient) => Effect.Effect<void>

/**
 * `cancel`, its effect made once per client and kept with it: every statement hands one to Effect.callback in case it
 * is interrupted, which almost none is (an effect is a description, run as often as needed).
 */
const cachedPerClient = (cancel: Cancel): Cancel => {
  const made = new WeakMap<PoolClient, Effect.Effect<void>>()
  return (client) => {
    let effect = made.get(client)
    if (effect === undefined) {
      effect = cancel(client)
      // Nothing to cancel with before the session's key arrived: asked again next time.
      if (effect !== Effect.void) made.set(client, effect)
    }
    return effect
  }
}

/** `pg_cancel_backend` on another client of the pool, for the backend pid `client` connected to. */
const cancelByBackendPid = (pool: Pool): Cancel => (client) => {
  // pg keeps the backend's pid on the client without declaring it.
  const processId = (client as unknown as { readonly processID?: number }).processID
  if (processId === undefined) return Effect.void
  return Effect.callback<void>((resume) => {
    if (pool.ending) return resume(Effect.void)
    pool.query(`SELECT pg_cancel_backend(${processId})`, () => resume(Effect.void))
  }).pipe(Effect.interruptible, Effect.timeoutOption("5 seconds"), Effect.asVoid)
}

const CANCEL_REQUEST_CODE = 80877102

/**
 * The protocol's CancelRequest with the key `client` was given, on a connection of its own to where `client`
 * connected. Behind a pooler the key is the pooler's, which forwards the cancel to the server connection running the
 * client's statement at that moment; a backend pid would name a server connection the pooler may have handed to
 * another client since.
 */
const cancelByRequest: Cancel = (client) => {
  // pg keeps the key and the address on the client without declaring them.
  const { host, port, processID, secretKey } = client as unknown as {
    readonly host: string
    readonly port: number
    readonly processID?: number
    readonly secretKey?: number
  }
  if (processID === undefined || secretKey === undefined) return Effect.void
  return Effect.callback<void>((resume) => {
    const packet = Buffer.alloc(16)
    packet.writeInt32BE(16, 0)
    packet.writeInt32BE(CANCEL_REQUEST_CODE, 4)
    packet.writeInt32BE(processID, 8)
    packet.writeInt32BE(secretKey, 12)
    const socket = host.startsWith("/") ? connect({ path: `${host}/.s.PGSQL.${port}` }) : connect({ host, port })
    const done = () => {
      socket.destroy()
      resume(Effect.void)
    }
    // Sent, then the socket left open until the other side closes it, as libpq does: that close says the cancel
    // was handled. PgBouncer 1.18 exits (FATAL "bad client state: 0", pgbouncer/pgbouncer#801) when a cancel's client
    // closes first while PgBouncer is still forwarding it.
    socket.once("connect", () => socket.write(packet))
    socket.once("end", done)
    socket.once("close", done)
    socket.once("error", done)
    return Effect.sync(() => socket.destroy())
  }).pipe(Effect.interruptible, Effect.timeoutOption("5 seconds"), Effect.asVoid)
}

type ErrorSlot = { current: ((cause: Error) => void) | undefined }
const errorSlots = new WeakMap<PoolClient, ErrorSlot>()

/**
 * Where a connection error of `client` goes: to whoever holds the client at that moment (`current`). One listener per
 * client for its whole life, instead of one added and removed around every statement.
 */
const errorSlotOf = (client: PoolClient): ErrorSlot => {
  let slot = errorSlots.get(client)
  if (slot === undefined) {
    const made: ErrorSlot = { current: undefined }
    client.on("error", (cause: Error) => made.current?.(cause))
    errorSlots.set(client, made)
    slot = made
  }
  return slot
}

/** One statement on a client of the pool, checked out for it alone. */
const onPoolClient = <A>(pool: Pool, cancel: Cancel, send: Send<A>): Effect.Effect<A, SqlError> =>
  Effect.callback<A, SqlError>((resume) => {
    let client: PoolClient | undefined
    let slot: ErrorSlot | undefined
    let done = false
    const finish = (error?: Error) => {
      if (done) return
      done = true
      if (slot !== undefined) slot.current = undefined
      client?.release(error)
    }
    function onError(cause: Error) {
      finish(cause)
      resume(Effect.fail(pgError(cause, "Connection error", "execute")))
    }
    pool.connect((cause, checkedOut) => {
      if (cause !== undefined && cause !== null) {
        noteAcquireFailure(cause)
        return resume(Effect.fail(pgError(cause, "Failed to acquire connection", "acquireConnection")))
      }
      if (checkedOut === undefined) return
      if (done) return checkedOut.release()
      client = checkedOut
      slot = errorSlotOf(checkedOut)
      slot.current = onError
      timed("query", send)(checkedOut, (outcome) => {
        finish()
        resume(outcome)
      })
    })
    return Effect.suspend(() => {
      if (client === undefined || done) {
        done = true
        return Effect.void
      }
      return Effect.ensuring(cancel(client), Effect.sync(() => finish()))
    })
  })

/** One statement on a client the caller holds (a transaction's). */
const onHeldClient = <A>(cancel: Cancel, client: PoolClient, send: Send<A>): Effect.Effect<A, SqlError> =>
  Effect.callback<A, SqlError>((resume) => {
    timed("transaction", send)(client, resume)
    return cancel(client)
  })

const rowsOf = (result: QueryResult<object> | Array<QueryResult<object>>): ReadonlyArray<object> =>
  // A text of several statements (no parameters) answers one result per statement.
  Array.isArray(result) ? result.map((each) => each.rows) : result.rows

/** Sends `text`; answers pg's result made into what the caller wants (`outcome`), in the same callback. */
const query = <A>(
  text: string,
  params: ReadonlyArray<unknown>,
  outcome: (result: QueryResult<object> | Array<QueryResult<object>>) => A
): Send<A> =>
(client, resume) =>
  // pg's overloads take a mutable array and declare one result; a text of several statements answers an array.
  client.query(
    text,
    params as Array<unknown>,
    (error: Error | null, result: QueryResult<object> | Array<QueryResult<object>>) =>
      resume(
        error ? Effect.fail(pgError(error, "Failed to execute statement", "execute")) : Effect.succeed(outcome(result))
      )
  )

const asIs = <A>(result: A): A => result

const queryValues =
  (text: string, params: ReadonlyArray<unknown>): Send<ReadonlyArray<ReadonlyArray<unknown>>> => (client, resume) =>
    // pg's query config takes a mutable array of values.
    client.query<Array<unknown>>(
      { text, values: params as Array<unknown>, rowMode: "array" },
      (error, result) =>
        resume(
          error ? Effect.fail(pgError(error, "Failed to execute statement", "execute")) : Effect.succeed(result.rows)
        )
    )

type Run = <A>(send: Send<A>) => Effect.Effect<A, SqlError>

const connection = (run: Run): SqlConnection.Connection => {
  const transformed = (
    text: string,
    params: ReadonlyArray<unknown>,
    transformRows: (<A extends object>(rows: ReadonlyArray<A>) => ReadonlyArray<A>) | undefined
  ) => run(query(text, params, transformRows === undefined ? rowsOf : (result) => transformRows(rowsOf(result))))
  return {
    execute: transformed,
    executeUnprepared: transformed,
    executeRaw: (text, params) => run(query(text, params, asIs)),
    executeValues: (text, params) => run(queryValues(text, params)),
    executeValuesUnprepared: (text, params) => run(queryValues(text, params)),
    // The service streams nothing: a stream is the whole result, read at once.
    executeStream: (text, params, transformRows) => Stream.fromIterableEffect(transformed(text, params, transformRows))
  }
}

/** A client of the pool held until the scope closes (a transaction), released with the error it met, if any. */
const reserveClient = (pool: Pool): Effect.Effect<PoolClient, SqlError, Scope.Scope> =>
  Effect.flatMap(Scope.Scope, (scope) =>
    Effect.callback<PoolClient, SqlError>((resume) => {
      let abandoned = false
      pool.connect((cause, client, release) => {
        if (cause !== undefined && cause !== null) {
          noteAcquireFailure(cause)
          return resume(
            Effect.fail(pgError(cause, "Failed to acquire connection for transaction", "acquireConnection"))
          )
        }
        if (client === undefined) return
        // The transaction was interrupted while it waited for a client: give it straight back.
        if (abandoned) return release()
        let failure: Error | undefined
        const slot = errorSlotOf(client)
        slot.current = (error: Error) => {
          failure = error
        }
        resume(Effect.as(
          Scope.addFinalizer(
            scope,
            Effect.sync(() => {
              slot.current = undefined
              release(failure)
            })
          ),
          client
        ))
      })
      return Effect.sync(() => {
        abandoned = true
      })
    }))

/** `LISTEN` on a connection of its own (`config`: the pool's settings, or another server's), held until the scope closes. */
const listenOn = (config: ClientConfig) => (channel: string) =>
  Effect.gen(function*() {
    const queue = yield* Effect.acquireRelease(Queue.unbounded<Notification, SqlError>(), Queue.shutdown)
    const lost = (cause: unknown) =>
      Queue.failCauseUnsafe(queue, Cause.fail(pgError(cause, "Listening connection lost", "listen")))
    const client = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: async () => {
          const client = new Client(config)
          client.on("error", lost)
          client.on("end", () => lost(new Error("Connection terminated")))
          await client.connect()
          return client
        },
        catch: (cause) => pgError(cause, "Failed to acquire connection for listen", "listen")
      }),
      (client) =>
        Effect.promise(() => {
          client.removeAllListeners("end")
          return client.end()
        }).pipe(Effect.timeoutOption("1 second"))
    )
    client.on("notification", (message) => {
      Queue.offerUnsafe(queue, {
        processId: message.processId,
        channel: message.channel,
        payload: message.payload ?? ""
      })
    })
    yield* Effect.tryPromise({
      try: () => client.query(`LISTEN ${escapeIdentifier(channel)}`),
      catch: (cause) => pgError(cause, "Failed to listen", "listen")
    })
    return queue
  })

/**
 * No session to listen on (behind a transaction pooler without a direct URL): a queue that stays open and never
 * delivers, so whoever waits on it falls back on polling; said once per listen, not left silent.
 */
const listenNowhere = (channel: string) =>
  Effect.andThen(
    Effect.logWarning(
      `LISTEN ${channel}: behind a pooler in transaction mode without DATABASE_DIRECT_URL no notification can arrive; ` +
        "polling only (JOBS_IDLE_INTERVAL_MS)"
    ),
    Effect.acquireRelease(Queue.unbounded<Notification, SqlError>(), Queue.shutdown)
  )

export interface PgSqlClientOptions {
  readonly applicationName: string
  /**
   * Set when a pooler in transaction mode (PgBouncer) stands between the pool and PostgreSQL: `begin` opens every
   * transaction (it sets what a session cannot carry through the pooler), and interrupted statements are cancelled
   * by the protocol's CancelRequest, which the pooler forwards.
   */
  readonly pooler?: { readonly begin: string } | undefined
  /**
   * Where LISTEN connects: the pool's server (default), another URL (DATABASE_DIRECT_URL: a session a transaction
   * pooler cannot give), or nowhere (no notification ever arrives; the background loops poll).
   */
  readonly listen?: "pool" | "nowhere" | { readonly url: string } | undefined
}

const listenerFor = (pool: Pool, listen: PgSqlClientOptions["listen"]) => {
  if (listen === "nowhere") return listenNowhere
  return listenOn(
    listen === undefined || listen === "pool" ? pool.options : { ...pool.options, connectionString: listen.url }
  )
}

type PgJson = Statement.Custom<"PgJson", unknown>
const PgJson = Statement.custom<PgJson>("PgJson")

const escape = Statement.defaultEscape("\"")

/** PostgreSQL's dialect, as @effect/sql-pg compiles it; a `json` fragment is bound as its JSON text. */
const compiler = Statement.makeCompiler<PgJson>({
  dialect: "pg",
  placeholder: (index) => `$${index}`,
  onIdentifier: escape,
  onRecordUpdate: (placeholders, valueAlias, valueColumns, values, returning) => [
    `(values ${placeholders}) AS ${valueAlias}${valueColumns}${returning ? ` RETURNING ${returning[0]}` : ""}`,
    returning ? values.flat().concat(returning[1]) : values.flat()
  ],
  onCustom: (custom, placeholder) => [placeholder(undefined), [JSON.stringify(custom.paramA)]]
})

/** The client over `pool`; the pool itself belongs to the caller. */
export const makePgSqlClient = (
  pool: Pool,
  options: PgSqlClientOptions
): Effect.Effect<PgClient.PgClient, never, Reactivity.Reactivity> =>
  Effect.gen(function*() {
    const cancel = cachedPerClient(options.pooler === undefined ? cancelByBackendPid(pool) : cancelByRequest)
    const perStatement = connection((send) => onPoolClient(pool, cancel, send))
    const client = yield* SqlClient.make({
      acquirer: Effect.succeed(perStatement),
      borrower: (f) => f(perStatement),
      transactionAcquirer: Effect.map(reserveClient(pool), (held) =>
        connection((send) => onHeldClient(cancel, held, send))),
      ...(options.pooler === undefined ? {} : { beginTransaction: options.pooler.begin }),
      compiler,
      driver: "pg",
      spanAttributes: [["db.system.name", "postgresql"]]
    })
    const pgClient: PgClient.PgClient = Object.assign(client, {
      [PgClient.TypeId]: PgClient.TypeId,
      config: { applicationName: options.applicationName },
      json: (value: unknown) =>
        Statement.fragment([PgJson(value, undefined, undefined)]),
      listen: listenerFor(pool, options.listen),
      notify: (channel: string, payload: string) => Effect.asVoid(client`SELECT pg_notify(${channel}, ${payload})`)
    })
    return pgClient
  })

/** `PgClient` and `SqlClient` (the same client) over the pool `acquire` opens, and the pool's DatabasePressure. */
export const layerFromPool = <E, R>(
  acquire: Effect.Effect<Pool, E, R>,
  options: PgSqlClientOptions
): Layer.Layer<PgClient.PgClient | SqlClient.SqlClient | DatabasePressure, E, Exclude<R, Scope.Scope>> =>
  Layer.effectContext(
    Effect.gen(function*() {
      const pool = yield* acquire
      // Removed before the pool is ended (finalizers run in reverse).
      yield* Effect.acquireRelease(
        Effect.sync(() => watchPool(pool, () => oldestWaitMs(pool))),
        (watched) => Effect.sync(watched.remove)
      )
      const client = yield* makePgSqlClient(pool, options)
      return Context.make(PgClient.PgClient, client).pipe(
        Context.add(SqlClient.SqlClient, client),
        Context.add(DatabasePressure, { oldestWaitMs: () => oldestWaitMs(pool) })
      )
    })
  ).pipe(Layer.provide(Reactivity.layer))
