/**
 * The `pg` pool under the SQL layer, with every wait bounded (src/db/Database.ts picks the values):
 * connecting and waiting for a free client (connectionTimeoutMillis), each statement on the server
 * (statement_timeout), lock waits (lock_timeout), a transaction left idle (idle in transaction), a
 * statement that never gets an answer (query_timeout), and TCP keepalive on every socket.
 *
 * A connection that stopped answering is never handed out again. pg keeps a client whose query timed
 * out, with the unanswered query still in front of its queue, so every later statement on it would wait
 * for the same answer until the socket dies (minutes, or never behind a black hole). Here such a client
 * ends its connection at once, and the pool drops it when it is released; so does a client released while
 * a query of its own is still unanswered (an interrupted request).
 *
 * An error raised while a connection was being opened is remembered (failedWhileOpening): PostgreSQL refuses a
 * session with SQLSTATEs (55000, a database not accepting connections) that mean a bug when a statement raises them.
 *
 * Statements with parameters are prepared: each connection parses a statement text once, under a name derived
 * from the text, and later only binds and executes it (PostgreSQL skips parse and analysis). At most
 * PREPARED_PER_CONNECTION texts per connection are named; the rest run unnamed as before. `prepare: false` turns it
 * off (for a pooler in transaction mode, which cannot keep a prepared statement on one server connection).
 *
 * How long the oldest request for a connection has been waiting (`oldestWaitMs`) tells how far behind the database
 * is: the HTTP edge stops admitting requests while it is long (src/http/ServeLifecycle.ts), before waiters reach the
 * connect timeout and fail after holding their requests' memory for seconds.
 */
import { createHash } from "node:crypto"
import { Client, type ClientConfig, Pool } from "pg"

export interface PoolSettings {
  readonly url: string
  readonly size: number
  readonly applicationName: string
  readonly connectTimeoutMs: number
  readonly statementTimeoutMs: number
  readonly lockTimeoutMs: number
  readonly idleInTransactionTimeoutMs: number
  readonly queryTimeoutMs: number
  readonly keepAliveDelayMs: number
  readonly prepare: boolean
  /**
   * Send statement_timeout, lock_timeout and idle_in_transaction_session_timeout in the startup packet (default
   * true). PgBouncer refuses a session that sends them ("unsupported startup parameter"); behind it every
   * transaction sets them instead (src/db/Database.ts).
   */
  readonly timeoutsAtStartup?: boolean
}

export const PREPARED_PER_CONNECTION = 500

const READ_TIMEOUT = "Query read timeout"

const isReadTimeout = (error: unknown) => error instanceof Error && error.message === READ_TIMEOUT

type QueryCallback = (error: unknown, result: unknown) => void

const isCallback = (arg: unknown): arg is QueryCallback => typeof arg === "function"

const statementName = (text: string) => `s_${createHash("sha1").update(text).digest("base64url")}`

const openingFailures = new WeakSet<object>()

/** `error` is what a connection attempt of this pool failed with: the server refused or never opened the session. */
export const failedWhileOpening = (error: unknown): boolean =>
  typeof error === "object" && error !== null && openingFailures.has(error)

/** pg calls it with the error of a failed attempt, or with `null` and the connected client. */
type ConnectCallback = (error: Error | null, client?: Client) => void

class StallSafeClient extends Client {
  #unanswered = 0
  readonly #prepared = new Map<string, string>()

  constructor(config: ClientConfig | undefined, private readonly prepare: boolean) {
    super(config)
  }

  override connect(): Promise<Client>
  override connect(callback: ConnectCallback): void
  override connect(callback?: ConnectCallback): Promise<Client> | void {
    if (callback === undefined) return super.connect()
    super.connect((error: Error | null, client?: Client) => {
      if (typeof error === "object" && error !== null) openingFailures.add(error)
      callback(error, client)
    })
  }

  get hasUnansweredQuery(): boolean {
    return this.#unanswered > 0
  }

  // Forwards every one of pg's query overloads (text + values + callback, config + callback, submittable): their
  // results are pg's own, so `any` as @types/pg declares them.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the override must return what pg's overloads declare
  override query(...args: Array<unknown>): any {
    const [text, values, callback] = args
    // Text + values + callback (the service's own statements): prepared when there are values, else sent as is.
    if (args.length === 3 && typeof text === "string" && Array.isArray(values) && isCallback(callback)) {
      const tracked = this.#tracked(callback)
      const name = this.prepare && values.length > 0 ? this.#nameFor(text) : undefined
      return name === undefined
        ? super.query(text, values, tracked)
        : super.query({ name, text, values }, tracked)
    }
    const tracked = args.map((arg) => (isCallback(arg) ? this.#tracked(arg) : arg))
    // eslint-disable-next-line @typescript-eslint/unbound-method -- applied to this very client, as pg's own call would be
    return Reflect.apply(super.query, this, tracked)
  }

  #nameFor(text: string): string | undefined {
    const known = this.#prepared.get(text)
    if (known !== undefined || this.#prepared.size >= PREPARED_PER_CONNECTION) return known
    const name = statementName(text)
    this.#prepared.set(text, name)
    return name
  }

  #tracked(callback: QueryCallback): QueryCallback {
    this.#unanswered += 1
    return (error, result) => {
      this.#unanswered -= 1
      if (isReadTimeout(error)) void this.end()
      callback(error, result)
    }
  }
}

const oldestWaits = new WeakMap<Pool, () => number>()

/** How long the oldest request for a connection of `pool` has been waiting, in ms (0 when none waits). */
export const oldestWaitMs = (pool: Pool): number => oldestWaits.get(pool)?.() ?? 0

/**
 * Notes when each request for a connection that has to wait (every connection in use) began waiting. pg hands
 * connections to waiters first come, first served, so the first entry still waiting is the oldest.
 */
const trackWaits = (pool: Pool, size: number) => {
  const waiting = new Set<{ readonly since: number }>()
  oldestWaits.set(pool, () => {
    const oldest = waiting.values().next()
    return oldest.done === true ? 0 : performance.now() - oldest.value.since
  })
  const connect = pool.connect.bind(pool) as (callback?: ConnectWaiter) => unknown
  pool.connect = ((callback?: ConnectWaiter) => {
    if (callback === undefined || pool.idleCount > 0 || pool.totalCount < size) return connect(callback)
    const entry = { since: performance.now() }
    waiting.add(entry)
    connect((...args) => {
      waiting.delete(entry)
      callback(...args)
    })
  }) as typeof pool.connect
}

type ConnectWaiter = (error: Error | undefined, client: unknown, release: unknown) => void

export const makePool = (settings: PoolSettings): Pool => {
  const pool = new Pool({
    connectionString: settings.url,
    max: settings.size,
    application_name: settings.applicationName,
    connectionTimeoutMillis: settings.connectTimeoutMs,
    ...(settings.timeoutsAtStartup === false ? {} : {
      statement_timeout: settings.statementTimeoutMs,
      lock_timeout: settings.lockTimeoutMs,
      idle_in_transaction_session_timeout: settings.idleInTransactionTimeoutMs
    }),
    query_timeout: settings.queryTimeoutMs,
    keepAlive: true,
    keepAliveInitialDelayMillis: settings.keepAliveDelayMs,
    Client: class extends StallSafeClient {
      constructor(config?: ClientConfig) {
        super(config, settings.prepare)
      }
    }
  })
  trackWaits(pool, settings.size)
  // An idle client whose connection breaks is removed by the pool; the error needs a listener, or it
  // would crash the process.
  pool.on("error", () => {})
  // Emitted before the pool decides whether to keep the client: an ending client is dropped.
  pool.on("release", (_error: unknown, client: unknown) => {
    if (client instanceof StallSafeClient && client.hasUnansweredQuery) void client.end()
  })
  return pool
}
