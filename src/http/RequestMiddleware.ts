/**
 * The middleware around the whole app (routes and route misses alike), one concern per module, in the order a request
 * meets them: its id (RequestId), unserved paths (UnservedPaths: 404 whatever the request), the 64 KiB body limit
 * (BodyLimits, ChunkedBody), content-type (ContentType), one JSON access-log line per request (AccessLog: never
 * headers, so never a key), the request log of an authenticated request (RequestLogging), Retry-After on 503s (ServiceUnavailable, DatabaseUnavailable) and an ErrorBody for
 * unhandled failures (UnhandledFailures, RouteMiss), and the request metrics (HttpMetrics: the route's template,
 * noted by the route middleware RouteTemplateLive). Headers are added in a pre-response handler so they also reach
 * responses encoded by the API layer; there too the rest of a body the app did not read is discarded (ChunkedBody).
 */
import { ByteSize, Clock, Effect, Option, Result } from "effect"
import { HttpEffect, HttpIncomingMessage, HttpServerRequest, HttpServerResponse } from "effect/http"
import { rateLimitHeaders, ResponseHints } from "../base/ResponseHints.ts"
import { AppConfig } from "../config/Config.ts"
import { errorCodeOf, logAccess } from "./AccessLog.ts"
import { declaresTooLargeBody, MAX_BODY_BYTES, tooLarge } from "./BodyLimits.ts"
import { bufferChunkedBody, discardRestOfBody } from "./ChunkedBody.ts"
import { isUnsupportedMediaType, takesJsonBody, unsupportedMediaType, withoutTypeOfEmptyBody } from "./ContentType.ts"
import { retryReadsOnLostConnection } from "./DatabaseUnavailable.ts"
import { errorResponse, pathOf } from "./ErrorResponse.ts"
import { recordRequest } from "./HttpMetrics.ts"
import { requestIdOf } from "./RequestId.ts"
import { clientAddressResolver } from "./ClientAddress.ts"
import { RequestOrigin } from "../base/RequestOrigin.ts"
import { type LoggedRequest, makeRequestLogging } from "./RequestLogging.ts"
import { retryAfterFor } from "./ServiceUnavailable.ts"
import { answerUnhandled } from "./UnhandledFailures.ts"
import { type UnservedPath, unservedAt, UnservedPaths } from "./UnservedPaths.ts"

const maxBodySize = ByteSize.bytes(MAX_BODY_BYTES)

const requestMiddleware = (
  unserved: ReadonlyArray<UnservedPath>,
  logRequest: (logged: LoggedRequest) => Effect.Effect<void>,
  metricsPerIntegration: boolean,
  clientAddress: (peer: string | undefined, headers: Readonly<Record<string, string | undefined>>) => string
) =>
<E, R>(
  app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
): Effect.Effect<HttpServerResponse.HttpServerResponse, unknown, R | HttpServerRequest.HttpServerRequest> =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const requestId = requestIdOf(request.headers["x-request-id"])
    const hints: typeof ResponseHints.Service = {
      retryAfterSeconds: undefined,
      integrationId: undefined,
      key: undefined,
      dashboardSessionId: undefined,
      route: undefined,
      rateLimit: undefined
    }
    const arrivedAt = yield* Clock.currentTimeMillis
    const started = performance.now()
    const declaredTooLarge = declaresTooLargeBody(request)
    let forwarded = withoutTypeOfEmptyBody(request)

    yield* HttpEffect.appendPreResponseHandler((_, response) => {
      const path = pathOf(request)
      const elapsedMs = performance.now() - started
      const durationMs = Math.round(elapsedMs)
      recordRequest({
        route: hints.route,
        method: request.method,
        status: response.status,
        seconds: elapsedMs / 1000,
        integration: metricsPerIntegration ? hints.integrationId : undefined
      })
      return Effect.map(
        Effect.andThen(
          // Before the rest of the body is discarded: the log reads the body the app read (or did not).
          logRequest({ request, forwarded, requestId, path, arrivedAt, durationMs, hints, response }),
          Effect.andThen(
            // A body declared over the limit is refused before it comes: the platform reads at most 256 KiB of what
            // is left after the answer (keeping the connection) or closes the connection gracefully. Waiting here for
            // all of it held the connection until the request timeout, and the 413 became a 408.
            declaredTooLarge ? Effect.void : discardRestOfBody(request),
            logAccess({
              requestId,
              method: request.method,
              path,
              status: response.status,
              durationMs,
              integrationId: hints.integrationId,
              errorCode: errorCodeOf(response)
            })
          )
        ),
        () => {
          const identified = HttpServerResponse.setHeader(response, "x-request-id", requestId)
          // Every authenticated answer says where the key's rate limit stands, so a client paces itself before a 429.
          const withId = hints.rateLimit === undefined
            ? identified
            : HttpServerResponse.setHeaders(identified, rateLimitHeaders(hints.rateLimit))
          const retryAfter = retryAfterFor(response, hints)
          return retryAfter === undefined
            ? withId
            : HttpServerResponse.setHeader(withId, "retry-after", String(retryAfter))
        }
      )
    })

    const hidden = unservedAt(unserved, request)
    if (hidden !== undefined) return errorResponse(404, { error: hidden.error })
    if (declaredTooLarge) return tooLarge()
    if (isUnsupportedMediaType(request)) return unsupportedMediaType()
    if (takesJsonBody(request) && request.headers["content-length"] === undefined) {
      const buffered = yield* Effect.result(bufferChunkedBody(request))
      if (Result.isFailure(buffered)) return errorResponse(400, { error: "request body could not be read" })
      if (Option.isNone(buffered.success)) return tooLarge()
      forwarded = buffered.success.value
    }
    let address: string | undefined
    const origin = {
      requestId,
      address: () => (address ??= clientAddress(Option.getOrUndefined(request.remoteAddress), request.headers))
    }
    return yield* app.pipe(
      Effect.provideService(HttpServerRequest.HttpServerRequest, forwarded),
      Effect.provideService(RequestOrigin, origin),
      Effect.provideService(HttpIncomingMessage.MaxBodySize, maxBodySize),
      Effect.provideService(ResponseHints, hints),
      retryReadsOnLostConnection(request.method),
      Effect.catchCause(answerUnhandled(request, requestId)),
      Effect.annotateLogs("requestId", requestId)
    )
  })

/** The middleware, over the paths this deployment does not serve. */
export const RequestMiddleware = Effect.gen(function*() {
  const config = yield* AppConfig
  return requestMiddleware(
    yield* UnservedPaths,
    yield* makeRequestLogging,
    config.metricsPerIntegration,
    clientAddressResolver(config.trustedProxies)
  )
})
