/**
 * The HTTP side of a failing database (src/db/DatabaseFailures.ts): a read whose connection was lost
 * is run once more, and what still fails because the database is unavailable is a 503 ErrorBody with
 * Retry-After, never a 500.
 */
import { Cause, Effect, Result } from "effect"
import { describeDatabaseFailure, isConnectionLost } from "../db/DatabaseFailures.ts"
import { errorResponse } from "./ErrorResponse.ts"

export const RETRY_AFTER_SECONDS = 2

const DATABASE_UNAVAILABLE = "the database is unavailable; retry shortly"

/** The request's one log line about it: the driver's code and message, no stack (one is written per request). */
const logDatabaseUnavailable = (error: unknown) =>
  Effect.logWarning(`database unavailable: ${describeDatabaseFailure(error)}`)

/** The 503 for a request that failed because the database is unavailable, logged once. */
export const answerDatabaseUnavailable = (error: unknown) =>
  Effect.as(
    logDatabaseUnavailable(error),
    errorResponse(503, { error: DATABASE_UNAVAILABLE }, { "retry-after": String(RETRY_AFTER_SECONDS) })
  )

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"])

const lostConnection = (cause: Cause.Cause<unknown>) => {
  const defect = Cause.findDefect(cause)
  return Result.isSuccess(defect) && isConnectionLost(defect.success)
}

/** A read whose database connection was lost runs once more, on a fresh connection: it has no effect to repeat. */
export const retryReadsOnLostConnection =
  (method: string) => <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    SAFE_METHODS.has(method)
      ? Effect.catchCause(self, (cause) => (lostConnection(cause) ? self : Effect.failCause(cause)))
      : self
