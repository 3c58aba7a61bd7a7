/**
 * The database pool's metrics, in Effect's default metric registry (the admin listener exports it): the pool's state
 * read when scraped, connection waits that timed out, and how long statements take.
 */
import { Context, Metric } from "effect"
import type { Pool } from "pg"

/** Effect's default metric registry: the context the admin listener's scrape reads it with. */
const registry = Context.empty()

/** Seconds; most statements take a millisecond or two, a slow one up to the statement timeout (15 s). */
const STATEMENT_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 15]

/** A statement on its own (it borrows a connection for its one round trip), or one inside a transaction. */
export type StatementKind = "query" | "transaction"

const statementDurations = new Map(
  (["query", "transaction"] as const).map((kind) => [
    kind,
    Metric.histogram("cop_db_statement_duration_seconds", {
      description:
        "Time from sending a statement on a connection to its answer, in seconds (the wait for a connection excluded).",
      attributes: { kind },
      boundaries: STATEMENT_BUCKETS
    })
  ])
)

export const observeStatement = (kind: StatementKind, seconds: number): void =>
  statementDurations.get(kind)?.updateUnsafe(seconds, registry)

const acquireTimeouts = Metric.counter("cop_db_pool_acquire_timeouts_total", {
  description: "Requests for a database connection that timed out (the pool's connect timeout).",
  incremental: true
})
acquireTimeouts.updateUnsafe(0, registry)

/** pg's two ways of saying a connection was not had within connectionTimeoutMillis: queued, or connecting. */
export const isConnectTimeout = (cause: unknown): boolean =>
  cause instanceof Error &&
  /^(Connection terminated due to connection timeout|timeout exceeded when trying to connect)$/.test(cause.message)

/** Counts `cause` when it is a connect timeout (call it with each failure to get a connection). */
export const noteAcquireFailure = (cause: unknown): void => {
  if (isConnectTimeout(cause)) acquireTimeouts.updateUnsafe(1, registry)
}

const gauge = (name: string, description: string, read: () => number) =>
  Metric.registerUnsafe(Metric.gauge(name, { description }), registry, {
    get: () => ({ value: read() }),
    update: () => {},
    modify: () => {}
  })

/** Registers gauges read from `pool` at each scrape; `remove` unregisters them (when the pool is ended). */
export const watchPool = (pool: Pool, oldestWaitMs: () => number): { readonly remove: () => void } => {
  const registrations = [
    gauge(
      "cop_db_pool_connections_in_use",
      "Database connections checked out of the pool.",
      () => pool.totalCount - pool.idleCount
    ),
    gauge("cop_db_pool_connections_idle", "Database connections open in the pool and free.", () => pool.idleCount),
    gauge("cop_db_pool_connections_max", "The most database connections the pool opens.", () => pool.options.max),
    gauge(
      "cop_db_pool_waiting_requests",
      "Requests for a database connection waiting for one.",
      () => pool.waitingCount
    ),
    gauge(
      "cop_db_pool_oldest_wait_seconds",
      "How long the oldest request for a database connection has been waiting, in seconds (0 when none waits).",
      () => oldestWaitMs() / 1000
    )
  ]
  return { remove: () => registrations.forEach((registration) => registration.remove()) }
}
