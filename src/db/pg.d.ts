/**
 * The part of `pg` (node-postgres, the driver under @effect/sql-pg) that src/db/PgPool.ts uses. The
 * package ships no types; @types/pg could replace this file.
 */
declare module "pg" {
  import type { EventEmitter } from "node:events"

  export interface CustomTypesConfig {
    readonly getTypeParser: (...args: Array<unknown>) => unknown
  }

  export interface ClientConfig {
    readonly connectionString?: string
    readonly application_name?: string
    /** Sent at start-up: PostgreSQL's statement_timeout, lock_timeout, ... (milliseconds). */
    readonly statement_timeout?: number
    readonly lock_timeout?: number
    readonly idle_in_transaction_session_timeout?: number
    /** Client-side: a query with no answer after this long fails with "Query read timeout". */
    readonly query_timeout?: number
    readonly keepAlive?: boolean
    readonly keepAliveInitialDelayMillis?: number
    readonly connectionTimeoutMillis?: number
    readonly types?: CustomTypesConfig
  }

  export interface PoolConfig extends ClientConfig {
    readonly max?: number
    readonly idleTimeoutMillis?: number
    /** Also bounds the wait for a free client when the pool is full. */
    readonly connectionTimeoutMillis?: number
    readonly Client?: new (config: ClientConfig) => Client
  }

  export class Client extends EventEmitter {
    constructor(config?: ClientConfig)
    /** Opens the connection; a pool passes a callback, which gets the error of a failed attempt. */
    connect(callback?: (error: unknown, ...rest: Array<unknown>) => void): unknown
    /** Every form (text + values + callback, config + callback, submittable). */
    query(...args: Array<unknown>): unknown
    /** Closes the connection; marks the client as ending at once, so a pool drops it when it is released. */
    end(): Promise<void>
  }

  export interface PoolClient extends Client {
    /** Back to the pool; with an error, the pool destroys the client instead. */
    release(error?: Error): void
  }

  export class Pool extends EventEmitter {
    constructor(config?: PoolConfig)
    readonly options: PoolConfig
    readonly totalCount: number
    connect(): Promise<PoolClient>
    query(text: string): Promise<unknown>
    end(): Promise<void>
  }
}
