/**
 * What the typed API layer cannot answer itself (route misses, unreadable bodies, requests that do not decode,
 * defects) becomes an ErrorBody here; the API answers its typed failures itself.
 */
import { Cause, Effect, Option } from "effect"
import { HttpServerError, type HttpServerRequest, type HttpServerResponse } from "effect/http"
import { HttpApiError } from "effect/http-api"
import { isDatabaseUnavailable } from "../db/DatabaseFailures.ts"
import { isBodyTooLarge, tooLarge } from "./BodyLimits.ts"
import { answerDatabaseUnavailable } from "./DatabaseUnavailable.ts"
import { answerDecodeError, isNestedTooDeeply } from "./DecodeErrors.ts"
import { errorResponse } from "./ErrorResponse.ts"
import { routeMiss } from "./RouteMiss.ts"

/** An SQL error on text PostgreSQL cannot store (a NUL character from the request): the input is at fault. */
const isUnstorableText = (error: unknown) => {
  // An SqlError carries the driver's error under its reason, with PostgreSQL's SQLSTATE as `code`; anything else has none.
  const code = (error as { reason?: { cause?: { code?: unknown } } } | undefined)?.reason?.cause?.code
  return code === "22021" || code === "22P05"
}

const isServerError = (error: unknown): error is HttpServerError.HttpServerError =>
  HttpServerError.isHttpServerError(error)

export const answerUnhandled = (request: HttpServerRequest.HttpServerRequest, requestId: string) =>
(
  cause: Cause.Cause<unknown>
): Effect.Effect<HttpServerResponse.HttpServerResponse, unknown> => {
  const failure = Cause.findErrorOption(cause)
  if (Option.isSome(failure) && !isServerError(failure.value)) return Effect.failCause(cause)
  if (Cause.hasInterruptsOnly(cause)) return Effect.failCause(cause)
  const error = Cause.squash(cause)
  if (isServerError(error) && error.reason._tag === "RouteNotFound") return Effect.succeed(routeMiss(request))
  const invalid = HttpApiError.HttpApiSchemaError.is(error) ? answerDecodeError(error) : undefined
  if (invalid !== undefined) return Effect.succeed(invalid)
  if (isServerError(error) && error.reason._tag === "RequestParseError") {
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
  // Anything else (a response that did not encode included) is the service's fault.
  return Effect.as(
    Effect.logError("unhandled failure", cause),
    errorResponse(500, { error: `internal error (request id ${requestId})` })
  )
}
