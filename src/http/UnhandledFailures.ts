/**
 * What the typed API layer cannot answer itself (route misses, unreadable bodies, defects) becomes an ErrorBody
 * here; typed failures pass through to the API's own error encoding.
 */
import { HttpServerError, type HttpServerRequest, type HttpServerResponse } from "@effect/platform"
import { Cause, Effect, Option } from "effect"
import { isBodyTooLarge, tooLarge } from "./BodyLimits.ts"
import { isDatabaseUnavailable } from "../db/DatabaseFailures.ts"
import { answerDatabaseUnavailable } from "./DatabaseUnavailable.ts"
import { errorResponse } from "./ErrorResponse.ts"
import { routeMiss } from "./RouteMiss.ts"

/** An SQL error on text PostgreSQL cannot store (a NUL character from the request): the input is at fault. */
const isUnstorableText = (error: unknown) => {
  // An SqlError wraps pg's error as its cause, which carries PostgreSQL's SQLSTATE as `code`; anything else has none.
  const code = (error as { cause?: { code?: unknown } } | undefined)?.cause?.code
  return code === "22021" || code === "22P05"
}

// The platform formats the offending value of a decode failure recursively: a deeply nested JSON body
// overflows the stack there. The input is at fault, not the service.
const isNestedTooDeeply = (error: unknown) => error instanceof RangeError && error.message.includes("call stack")

export const answerUnhandled = (request: HttpServerRequest.HttpServerRequest, requestId: string) =>
(
  cause: Cause.Cause<unknown>
): Effect.Effect<HttpServerResponse.HttpServerResponse, unknown> => {
  const failure = Cause.failureOption(cause)
  if (Option.isSome(failure) && !HttpServerError.isServerError(failure.value)) return Effect.failCause(cause)
  if (Cause.isInterruptedOnly(cause)) return Effect.failCause(cause)
  const error = Cause.squash(cause)
  if (HttpServerError.isServerError(error) && error._tag === "RouteNotFound") return Effect.succeed(routeMiss(request))
  if (HttpServerError.isServerError(error) && error._tag === "RequestError") {
    return Effect.succeed(
      isBodyTooLarge(error) ? tooLarge() : errorResponse(400, { error: "request body is not valid JSON" })
    )
  }
  if (isNestedTooDeeply(error)) {
    return Effect.succeed(errorResponse(400, { error: "request body is nested too deeply" }))
  }
  if (isUnstorableText(error)) {
    return Effect.succeed(errorResponse(400, { error: "request contains characters that are not allowed (NUL)" }))
  }
  if (isDatabaseUnavailable(error)) return answerDatabaseUnavailable(error)
  return Effect.as(
    Effect.logError("unhandled failure", cause),
    errorResponse(500, { error: `internal error (request id ${requestId})` })
  )
}
