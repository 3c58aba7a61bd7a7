import {
  HttpApiBuilder,
  HttpApp,
  HttpIncomingMessage,
  HttpServerError,
  HttpServerRequest,
  HttpServerResponse
} from "@effect/platform"
import { IncomingMessage } from "node:http"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import * as NodeStream from "@effect/platform-node/NodeStream"
import type { ErrorBody } from "@cop-integrations/contracts"
import { Cause, Effect, Option, Stream } from "effect"
import {
  DATABASE_UNAVAILABLE,
  isDatabaseUnavailable,
  logDatabaseUnavailable,
  RETRY_AFTER_SECONDS,
  retryReadsOnLostConnection
} from "./DatabaseUnavailable.ts"
import { logAccess } from "./AccessLog.ts"
import { requestIdOf } from "./RequestId.ts"
import { ResponseHints } from "../base/ResponseHints.ts"
import { allowedMethods } from "./Routes.ts"
import { type UnservedPath, unservedAt, UnservedPaths } from "./UnservedPaths.ts"

export const MAX_BODY_BYTES = 64 * 1024

const errorResponse = (status: number, body: ErrorBody, headers: Record<string, string> = {}) =>
  HttpServerResponse.unsafeJson(body, { status, headers })

const jsonMethods = new Set(["POST", "PUT", "PATCH"])

const unsupportedMediaType = (request: HttpServerRequest.HttpServerRequest): boolean => {
  if (!jsonMethods.has(request.method)) return false
  const contentType = request.headers["content-type"]
  return contentType !== undefined && !/^application\/json\s*(;|$)/i.test(contentType)
}

const pathOf = (request: HttpServerRequest.HttpServerRequest) => new URL(request.url, "http://localhost").pathname

const isDecodablePath = (path: string) => {
  try {
    decodeURIComponent(path)
    return true
  } catch {
    return false
  }
}

const routeMiss = (request: HttpServerRequest.HttpServerRequest) => {
  const path = pathOf(request)
  if (!isDecodablePath(path)) return errorResponse(400, { error: "request path is not valid percent-encoded UTF-8" })
  const allowed = allowedMethods(path)
  // A route that allows this very method but did not match (e.g. an undecodable parameter) is not a 405.
  return allowed.length > 0 && !allowed.includes(request.method)
    ? errorResponse(405, { error: `method ${request.method} is not allowed on ${path}; allowed: ${allowed.join(", ")}` }, {
      allow: allowed.join(", ")
    })
    : errorResponse(404, { error: `no such endpoint: ${request.method} ${path}` })
}

const isBodyTooLarge = (error: HttpServerError.RequestError) =>
  error.cause instanceof Error && error.cause.message.includes("maxBytes")

const tooLarge = () =>
  errorResponse(413, { error: `request body exceeds ${MAX_BODY_BYTES} bytes` })

/**
 * Bodies without Content-Length (chunked) are read up to this much before the 413; past it, Node discards
 * the rest while the 413 is written, and a web-handler request's stream is cancelled.
 */
const MAX_DRAINED_BYTES = 1024 * 1024

/** The Node request under `request`, when it is served by Node (not through the web handler). */
const nodeRequestOf = (request: HttpServerRequest.HttpServerRequest): Option.Option<IncomingMessage> => {
  const source: unknown = NodeHttpServerRequest.toIncomingMessage(request)
  return source instanceof IncomingMessage ? Option.some(source) : Option.none()
}

/**
 * The body as a stream. On Node, stopping early must not destroy the request (that resets the connection
 * before the 413 is written): the rest is discarded instead, as Node does for a body a handler never read.
 */
const chunkedBodyStream = (request: HttpServerRequest.HttpServerRequest) =>
  Option.match(nodeRequestOf(request), {
    onNone: () => request.stream,
    onSome: (incoming) =>
      NodeStream.fromReadable<HttpServerError.RequestError, Uint8Array>(
        () => incoming,
        (cause) => new HttpServerError.RequestError({ request, reason: "Decode", cause }),
        { closeOnDone: false }
      )
  })

/** Reads and throws away what is left of a body over the limit, on Node (bounded by the server's request timeout). */
const discardRestOfBody = (request: HttpServerRequest.HttpServerRequest) =>
  Effect.sync(() => Option.map(nodeRequestOf(request), (incoming) => incoming.resume()))

/**
 * A chunked body is read here, not by the platform: its size limit destroys the socket as soon as the
 * limit is crossed, so the client never sees the 413. Up to 64 KiB is kept and handed on as the request
 * body; beyond that the rest is read and discarded (see MAX_DRAINED_BYTES) so the 413 can be written.
 */
const bufferChunkedBody = (request: HttpServerRequest.HttpServerRequest) =>
  Effect.map(
    Stream.runFoldWhile(
      chunkedBodyStream(request),
      { chunks: [] as Array<Uint8Array>, bytes: 0 },
      (acc) => acc.bytes <= MAX_DRAINED_BYTES,
      (acc, chunk) => {
        acc.bytes += chunk.length
        if (acc.bytes <= MAX_BODY_BYTES) acc.chunks.push(chunk)
        return acc
      }
    ),
    ({ bytes, chunks }) => {
      if (bytes > MAX_BODY_BYTES) return Option.none()
      const body = Buffer.concat(chunks)
      const headers = new Headers()
      for (const [name, value] of Object.entries(request.headers)) {
        if (name !== "transfer-encoding") headers.set(name, value)
      }
      headers.set("content-length", String(body.length))
      const buffered = HttpServerRequest.fromWeb(
        new Request(new URL(request.url, "http://localhost"), { method: request.method, headers, body })
      )
      return Option.some(
        Option.match(request.remoteAddress, {
          onNone: () => buffered,
          onSome: (remoteAddress) => buffered.modify({ remoteAddress })
        })
      )
    }
  )

/** An SQL error on text PostgreSQL cannot store (a NUL character from the request): the input is at fault. */
const isUnstorableText = (error: unknown) => {
  const code = (error as { cause?: { code?: unknown } } | undefined)?.cause?.code
  return code === "22021" || code === "22P05"
}

/**
 * What the typed API layer cannot answer itself (route misses, unreadable bodies, defects) becomes an
 * ErrorBody here; typed failures pass through to the API's own error encoding.
 */
const answerUnhandled = (request: HttpServerRequest.HttpServerRequest, requestId: string) =>
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
  // The platform formats the offending value of a decode failure recursively: a deeply nested JSON body
  // overflows the stack there. The input is at fault, not the service.
  if (error instanceof RangeError && error.message.includes("call stack")) {
    return Effect.succeed(errorResponse(400, { error: "request body is nested too deeply" }))
  }
  if (isUnstorableText(error)) {
    return Effect.succeed(errorResponse(400, { error: "request contains characters that are not allowed (NUL)" }))
  }
  if (isDatabaseUnavailable(error)) {
    return Effect.as(
      logDatabaseUnavailable(error),
      errorResponse(503, { error: DATABASE_UNAVAILABLE }, { "retry-after": String(RETRY_AFTER_SECONDS) })
    )
  }
  return Effect.as(
    Effect.logError("unhandled failure", cause),
    errorResponse(500, { error: `internal error (request id ${requestId})` })
  )
}

const decoder = new TextDecoder()

/** The `errorCode` of an ErrorBody answer (409s and the like), for the access line; undefined for any other answer. */
const errorCodeOf = (response: HttpServerResponse.HttpServerResponse): string | undefined => {
  if (response.status < 400 || response.body._tag !== "Uint8Array") return undefined
  try {
    const body: unknown = JSON.parse(decoder.decode(response.body.body))
    return typeof body === "object" && body !== null && "errorCode" in body && typeof body.errorCode === "string"
      ? body.errorCode.slice(0, 64)
      : undefined
  } catch {
    return undefined
  }
}

/**
 * The `Retry-After` of a 503 that sets none of its own: an outside system (the payout provider, the chain node, the
 * swap router, the e-mail API) did not answer. The call already spent its whole timeout on its tries, so a partner
 * should not come back at once; a few seconds lets a brief outage pass without keeping a user waiting.
 */
export const OUTSIDE_RETRY_AFTER_SECONDS = 5

/**
 * API-level middleware around every route: request ids, unserved paths (404 whatever the request), the 64 KiB body
 * limit, content-type, one JSON access-log line per request (never headers, so never a key), and ErrorBody for
 * unhandled failures. Headers are added in a pre-response handler so they also reach responses encoded by the API
 * layer.
 */
export const errorBodies = (unserved: ReadonlyArray<UnservedPath>) => (app: HttpApp.Default): HttpApp.Default =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const requestId = requestIdOf(request.headers["x-request-id"])
    const hints: typeof ResponseHints.Service = { retryAfterSeconds: undefined, integrationId: undefined }
    const started = performance.now()

    yield* HttpApp.appendPreResponseHandler((_, response) =>
      Effect.gen(function*() {
        yield* logAccess({
          requestId,
          method: request.method,
          path: pathOf(request),
          status: response.status,
          durationMs: Math.round(performance.now() - started),
          integrationId: hints.integrationId,
          errorCode: errorCodeOf(response)
        })
        const withId = HttpServerResponse.setHeader(response, "x-request-id", requestId)
        const retryAfter = hints.retryAfterSeconds ??
          (response.status === 503 && response.headers["retry-after"] === undefined ? OUTSIDE_RETRY_AFTER_SECONDS : undefined)
        return retryAfter === undefined ? withId : HttpServerResponse.setHeader(withId, "retry-after", String(retryAfter))
      })
    )

    const hidden = unservedAt(unserved, request)
    if (hidden !== undefined) return errorResponse(404, { error: hidden.error })
    if (Number(request.headers["content-length"] ?? "0") > MAX_BODY_BYTES) return tooLarge()
    if (unsupportedMediaType(request)) {
      return errorResponse(415, { error: "content-type must be application/json" })
    }
    let forwarded = request
    if (jsonMethods.has(request.method) && request.headers["content-length"] === undefined) {
      const buffered = yield* Effect.either(bufferChunkedBody(request))
      if (buffered._tag === "Left") return errorResponse(400, { error: "request body could not be read" })
      if (Option.isNone(buffered.right)) return yield* Effect.as(discardRestOfBody(request), tooLarge())
      forwarded = buffered.right.value
    }
    return yield* app.pipe(
      Effect.provideService(HttpServerRequest.HttpServerRequest, forwarded),
      HttpIncomingMessage.withMaxBodySize(Option.some(MAX_BODY_BYTES)),
      Effect.provideService(ResponseHints, hints),
      retryReadsOnLostConnection(request.method),
      Effect.catchAllCause(answerUnhandled(request, requestId)),
      Effect.annotateLogs("requestId", requestId)
    )
  }) as HttpApp.Default

export const ErrorBodiesLive = HttpApiBuilder.middleware(Effect.map(UnservedPaths, errorBodies))
