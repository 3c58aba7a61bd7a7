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
 */
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
}

const READ_TIMEOUT = "Query read timeout"

const isReadTimeout = (error: unknown) => error instanceof Error && error.message === READ_TIMEOUT

type QueryCallback = (error: unknown, result: unknown) => void

const isCallback = (arg: unknown): arg is QueryCallback => typeof arg === "function"

class StallSafeClient extends Client {
  #unanswered = 0

  constructor(config: ClientConfig) {
    super(config)
  }

  get hasUnansweredQuery(): boolean {
    return this.#unanswered > 0
  }

  override query(...args: Array<unknown>): unknown {
    return super.query(...args.map((arg) => (isCallback(arg) ? this.#tracked(arg) : arg)))
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

export const makePool = (settings: PoolSettings): Pool => {
  const pool = new Pool({
    connectionString: settings.url,
    max: settings.size,
    application_name: settings.applicationName,
    connectionTimeoutMillis: settings.connectTimeoutMs,
    statement_timeout: settings.statementTimeoutMs,
    lock_timeout: settings.lockTimeoutMs,
    idle_in_transaction_session_timeout: settings.idleInTransactionTimeoutMs,
    query_timeout: settings.queryTimeoutMs,
    keepAlive: true,
    keepAliveInitialDelayMillis: settings.keepAliveDelayMs,
    Client: StallSafeClient
  })
  // An idle client whose connection breaks is removed by the pool; the error needs a listener, or it
  // would crash the process.
  pool.on("error", () => {})
  // Emitted before the pool decides whether to keep the client: an ending client is dropped.
  pool.on("release", (_error: unknown, client: unknown) => {
    if (client instanceof StallSafeClient && client.hasUnansweredQuery) void client.end()
  })
  return pool
}
