/**
 * Which SQL failures are the database being unavailable (the client may retry: 503), as opposed to a
 * bug (500). Services turn SqlError into a defect; the HTTP edge classifies it with these.
 */
import { SqlError } from "@effect/sql/SqlError"

/** The connection could not be opened or was lost: nothing can have committed unless COMMIT was in flight. */
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

/** pg's own messages for a lost, refused or timed-out connection (they carry no code). */
const CONNECTION_MESSAGES =
  /Connection terminated|not queryable|timeout exceeded when trying to connect|timeout expired|Connection timed out/i

/**
 * Server-side: connection exceptions (08), resources (53), shutdown and cannot-connect-now (57P0x),
 * system errors (58), idle-in-transaction timeout (25P03).
 */
const LOST_SQLSTATE = /^(08|53|57P0|58)|^25P03$/

/** Server-side, connection intact: statement timeout, lock timeout, serialization failure, deadlock. */
const TRANSIENT_SQLSTATE = new Set(["57014", "55P03", "40001", "40P01"])

const QUERY_READ_TIMEOUT = "Query read timeout"

const codeOf = (cause: unknown): string | undefined => {
  if (typeof cause !== "object" || cause === null || !("code" in cause)) return undefined
  return typeof cause.code === "string" ? cause.code : undefined
}

const messageOf = (cause: unknown): string => (cause instanceof Error ? cause.message : "")

/** The connection failed or was lost: a read may simply be run again. */
export const isConnectionLost = (error: unknown): boolean => {
  if (!(error instanceof SqlError)) return false
  const code = codeOf(error.cause)
  if (code !== undefined && (NETWORK_CODES.has(code) || LOST_SQLSTATE.test(code))) return true
  return CONNECTION_MESSAGES.test(messageOf(error.cause))
}

/** The database is unreachable, stalled, overloaded or busy: retry later (503). */
export const isDatabaseUnavailable = (error: unknown): boolean => {
  if (!(error instanceof SqlError)) return false
  if (isConnectionLost(error)) return true
  const code = codeOf(error.cause)
  return (code !== undefined && TRANSIENT_SQLSTATE.has(code)) || messageOf(error.cause) === QUERY_READ_TIMEOUT
}
