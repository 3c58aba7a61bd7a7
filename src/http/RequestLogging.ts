/**
 * The request log of an authenticated request (src/requestLogs): built in the request middleware's pre-response
 * handler from what the middleware already knows (request id, method, path, status, duration, the integration and key
 * Authentication noted) and handed to the recorder, which never waits for the database. Bodies, the query and headers
 * go through the summaries of src/requestLogs/Summary.ts, so no secret is ever kept. A request that did not
 * authenticate gets no log (its integration is not known), nor do the request-log endpoints themselves (a dashboard
 * polling them would fill the log with its own reads).
 */
import { ByteSize, Effect, Result } from "effect"
import { HttpIncomingMessage, type HttpServerRequest, type HttpServerResponse } from "effect/http"
import type { ResponseHints } from "../base/ResponseHints.ts"
import { newInternalId } from "../base/ids.ts"
import { AppConfig } from "../config/Config.ts"
import { RequestLogRecorder } from "../requestLogs/RequestLogRecorder.ts"
import {
  scrubMessage,
  scrubPath,
  summarise,
  summariseHeaders,
  summariseJsonText,
  summariseQuery
} from "../requestLogs/Summary.ts"
import { MAX_BODY_BYTES } from "./BodyLimits.ts"
import { clientAddressResolver } from "./ClientAddress.ts"
import { takesJsonBody } from "./ContentType.ts"

const NOT_LOGGED_PREFIX = "/api/integrations/request-logs"
/**
 * Answers longer than this are described by their size, not parsed: parsing a page of 50 payouts (150 KB) costs
 * about a fifth of what the list itself does, for a summary that would show three of them.
 */
export const MAX_SUMMARISED_RESPONSE_BYTES = 16 * 1024
const MAX_ERROR_CHARS = 500
const maxBodySize = ByteSize.bytes(MAX_BODY_BYTES)
const decoder = new TextDecoder()

export interface LoggedRequest {
  /** The request as it arrived: headers, peer, URL. */
  readonly request: HttpServerRequest.HttpServerRequest
  /** The request the app was handed (its body already read when the app read it). */
  readonly forwarded: HttpServerRequest.HttpServerRequest
  readonly requestId: string
  readonly path: string
  readonly arrivedAt: number
  readonly durationMs: number
  readonly hints: typeof ResponseHints.Service
  readonly response: HttpServerResponse.HttpServerResponse
}

/** The body the app read (read here, within the limit, when it did not), summarised; null without one. */
const requestBodyOf = (logged: LoggedRequest): Effect.Effect<unknown> =>
  takesJsonBody(logged.request)
    ? Effect.map(
      Effect.result(Effect.provideService(logged.forwarded.text, HttpIncomingMessage.MaxBodySize, maxBodySize)),
      (text) => Result.isSuccess(text) ? summariseJsonText(text.success) : { unreadable: true }
    )
    : Effect.succeed(null)

interface Answer {
  readonly body: unknown
  readonly error: string | null
  readonly errorCode: string | null
}

const noAnswer: Answer = { body: null, error: null, errorCode: null }

/**
 * The answer's body summarised and, for an ErrorBody, its message (without quoted input) and errorCode. A JSON answer
 * is held as text, encoded only when an adapter asks for its bytes (the Node server writes the text): it is read as
 * text and measured by its declared length, so the log never encodes an answer a second time.
 */
export const answerOf = (response: HttpServerResponse.HttpServerResponse): Answer => {
  const answer = response.body
  if (answer._tag !== "Uint8Array") return noAnswer
  const size = answer.contentLength
  if (size > MAX_SUMMARISED_RESPONSE_BYTES) return { ...noAnswer, body: { notSummarised: `${size} bytes` } }
  let parsed: unknown
  try {
    parsed = JSON.parse(answer.text ?? decoder.decode(answer.body))
  } catch {
    return { ...noAnswer, body: { notJson: `${size} bytes` } }
  }
  const body = summarise(parsed)
  if (response.status < 400 || typeof parsed !== "object" || parsed === null) return { ...noAnswer, body }
  const error = "error" in parsed && typeof parsed.error === "string"
    ? scrubMessage(parsed.error, MAX_ERROR_CHARS)
    : null
  const errorCode = "errorCode" in parsed && typeof parsed.errorCode === "string"
    ? scrubMessage(parsed.errorCode, 64)
    : null
  return { body, error, errorCode }
}

/** Records a request's log when it authenticated; never waits for the database. */
export const makeRequestLogging = Effect.gen(function*() {
  const recorder = yield* RequestLogRecorder
  const config = yield* AppConfig
  const clientAddress = clientAddressResolver(config.trustedProxies)

  return (logged: LoggedRequest): Effect.Effect<void> => {
    const { hints, request } = logged
    const integrationId = hints.integrationId
    const key = hints.key
    if (integrationId === undefined || key === undefined || logged.path.startsWith(NOT_LOGGED_PREFIX)) {
      return Effect.void
    }
    return Effect.flatMap(requestBodyOf(logged), (requestBody) => {
      const answer = answerOf(logged.response)
      const search = request.url.indexOf("?")
      return recorder.record({
        id: newInternalId("rl"),
        integrationId,
        requestId: logged.requestId,
        at: new Date(logged.arrivedAt),
        method: request.method,
        path: scrubPath(logged.path),
        status: logged.response.status,
        errorCode: answer.errorCode,
        error: answer.error,
        durationMs: logged.durationMs,
        keyId: key.id,
        keyLast4: key.last4,
        dashboardSessionId: hints.dashboardSessionId ?? null,
        clientAddress: clientAddress(
          request.remoteAddress._tag === "Some" ? request.remoteAddress.value : undefined,
          request.headers
        ),
        requestQuery: search < 0 ? {} : summariseQuery(request.url.slice(search + 1)),
        requestHeaders: summariseHeaders(request.headers),
        requestBody,
        responseBody: answer.body
      })
    })
  }
})
