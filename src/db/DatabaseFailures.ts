/**
 * Which SQL failures are the database being unavailable (the client may retry: 503), as opposed to a
 * bug (500). Services turn SqlError into a defect; the HTTP edge classifies it with these.
 *
 * PostgreSQL's failures are classified by SQLSTATE class (the first two characters), which PostgreSQL keeps
 * stable across versions, not by their messages. Two kinds of failure carry no SQLSTATE: the driver's socket
 * errors (an errno code) and a few messages of `pg` itself for a connection it lost or could not open.
 */
import { SqlError } from "effect/sql/SqlError"
import { failedWhileOpening } from "./PgPool.ts"

/**
 * - `lost`: no session, or the session ended (nothing can have committed unless COMMIT was in flight): a read
 *   may run again at once, on another connection.
 * - `busy`: the session is intact but the statement was refused for now (timeout, lock, conflict): retry later.
 * - `bug`: anything else, a fault of the service (a constraint violation, a syntax error, a bad parameter).
 */
export type DatabaseFailure = "lost" | "busy" | "bug"

/** The driver's socket errors: the connection could not be opened or broke. */
const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN"
])

/** `pg`'s own errors for a connection it lost or could not open, exactly as it words them (they carry no code). */
const CONNECTION_MESSAGES = new Set([
  "Connection terminated",
  "Connection terminated unexpectedly",
  "Connection terminated due to connection timeout",
  "timeout exceeded when trying to connect",
  "timeout expired",
  "Client has encountered a connection error and is not queryable",
  "Client was closed and is not queryable"
])

/** The client-side query_timeout (src/db/PgPool.ts ends that connection): the statement may have run. */
const QUERY_READ_TIMEOUT = "Query read timeout"

/**
 * Refusals of a new session, by class: 08 connection exception, 53 insufficient resources (too many
 * connections), 55 object not in prerequisite state (the database is not accepting connections), 57 operator
 * intervention (starting up, shutting down, in recovery), 58 system error. Refusals for a wrong password (28) or a
 * database that does not exist (3D) are configuration mistakes a retry does not fix: they stay 500.
 */
const REFUSED_AT_CONNECT = new Set(["08", "53", "55", "57", "58"])

/**
 * An established session failing, by SQLSTATE. Session gone: class 08 (connection exception), 53 (insufficient
 * resources), 58 (system error), 57P0x (terminated by an administrator, a crash shutdown, the database dropped,
 * an idle-session timeout), 25P03/25P04 (idle-in-transaction or transaction timeout, which end the session).
 * Session intact, statement refused for now: 57014 (statement timeout or cancel), 57000 (other operator
 * intervention), 55P03 (lock timeout), 40001 (serialization failure), 40P01 (deadlock), 40003 (statement
 * completion unknown).
 */
const classifySqlState = (state: string): DatabaseFailure => {
  const stateClass = state.slice(0, 2)
  if (stateClass === "08" || stateClass === "53" || stateClass === "58") return "lost"
  if (state.startsWith("57P") || state === "25P03" || state === "25P04") return "lost"
  if (stateClass === "57" || state === "55P03" || state === "40001" || state === "40P01" || state === "40003") {
    return "busy"
  }
  return "bug"
}

const isSqlState = (code: string) => /^[0-9A-Z]{5}$/.test(code)

const codeOf = (cause: unknown): string | undefined => {
  if (typeof cause !== "object" || cause === null || !("code" in cause)) return undefined
  return typeof cause.code === "string" ? cause.code : undefined
}

const messageOf = (cause: unknown): string => (cause instanceof Error ? cause.message : "")

/** The driver's error under an SqlError (its reason's cause). */
const driverErrorOf = (error: SqlError): unknown => error.reason.cause

/** What kind of failure `error` is; only an SqlError can be the database's. */
export const classifyDatabaseFailure = (error: unknown): DatabaseFailure => {
  if (!(error instanceof SqlError)) return "bug"
  const cause = driverErrorOf(error)
  const code = codeOf(cause)
  if (code !== undefined && NETWORK_CODES.has(code)) return "lost"
  if (code !== undefined && isSqlState(code)) {
    return failedWhileOpening(cause) && REFUSED_AT_CONNECT.has(code.slice(0, 2)) ? "lost" : classifySqlState(code)
  }
  const message = messageOf(cause)
  if (CONNECTION_MESSAGES.has(message)) return "lost"
  return message === QUERY_READ_TIMEOUT ? "busy" : "bug"
}

/** The connection failed or was lost: a read may simply be run again. */
export const isConnectionLost = (error: unknown): boolean => classifyDatabaseFailure(error) === "lost"

/** The database is unreachable, stalled, overloaded or busy: retry later (503). */
export const isDatabaseUnavailable = (error: unknown): boolean => classifyDatabaseFailure(error) !== "bug"

/**
 * One line about an unavailable database for the log: the driver's code (SQLSTATE or errno) and message, without
 * a stack (the stack says nothing about a database that is down, and one is written per request).
 */
export const describeDatabaseFailure = (error: unknown): string => {
  const cause = error instanceof SqlError ? driverErrorOf(error) : error
  const code = codeOf(cause)
  const message = messageOf(cause).replace(/\s+/g, " ").slice(0, 200)
  return code === undefined ? message : `${code} ${message}`
}
