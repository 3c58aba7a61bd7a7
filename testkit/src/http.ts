/**
 * The kit's only way onto the network: `fetch`, with every request and response recorded as evidence
 * (keys redacted) and a curl that reproduces it; each answer read within the request's time and at most
 * MAX_API_ANSWER_BYTES (./boundedFetch.ts). A 429 with Retry-After is waited out and retried
 * (a deployment's rate limit is not a conformance failure) unless the caller expects it; one that cannot be waited
 * out within the scenario's time is reported as its own cause, not as whatever rule the scenario was checking.
 */
import { Duration, Effect } from "effect"
import { type BoundedAnswer, type Bounds, fetchBounded, MAX_API_ANSWER_BYTES } from "./boundedFetch.ts"
import { KEY_VARIABLES, toCurl } from "./curl.ts"
import { describeError, type Exchange, type RecordedRequest, type RecordedResponse, withCause } from "./exchange.ts"
import { failure, type ScenarioFailure, show } from "./failure.ts"

export type { Exchange, RecordedRequest, RecordedResponse } from "./exchange.ts"

/** Which credentials a request carries: the run's keys, none, or a literal header (never a real key). */
export type Auth = "primary" | "second" | "none" | { readonly authorization: string }

export interface HttpRequest {
  readonly method: string
  /** Path with an optional raw query (`/api/...?limit=1`), sent exactly as written. */
  readonly path: string
  readonly query?: Readonly<Record<string, string>> | undefined
  readonly headers?: Readonly<Record<string, string>> | undefined
  /** Sent as JSON with `Content-Type: application/json`. */
  readonly json?: unknown
  /** A raw body (its content type, if any, from `headers`). */
  readonly body?: string | Uint8Array | undefined
  /** Send the body as a stream (Transfer-Encoding: chunked, no Content-Length). */
  readonly chunked?: boolean | undefined
  readonly auth?: Auth | undefined
  /**
   * Default true: wait out a 429 as its Retry-After says and retry (at most 5 times, within the scenario's time);
   * a 429 that cannot be waited out fails the scenario as "rate limited by the deployment".
   */
  readonly retryOn429?: boolean | undefined
}

/** An exchange that got an HTTP response (what `send` returns). */
export interface Answered extends Exchange {
  readonly response: RecordedResponse
}

const isAnswered = (exchange: Exchange): exchange is Answered => exchange.response !== undefined

export interface HttpConfig {
  readonly baseUrl: string
  readonly apiKey: string
  readonly secondApiKey: string | undefined
  readonly fetch: typeof globalThis.fetch
  readonly requestTimeoutMs: number
  /** When the scenario's time runs out (epoch ms): a wait for a 429's Retry-After must end before it. */
  readonly deadline?: number | undefined
}

/** The root cause of every failure that is a deployment's rate limit, so a report tells them apart from broken rules. */
export const RATE_LIMITED = "rate limited by the deployment (429)"

const MAX_429_RETRIES = 5

const EVIDENCE_BODY_LIMIT = 4096

const truncate = (text: string): string =>
  text.length > EVIDENCE_BODY_LIMIT ? `${text.slice(0, EVIDENCE_BODY_LIMIT)}… (${text.length} chars)` : text

const encodeBody = (request: HttpRequest): Uint8Array<ArrayBuffer> | undefined => {
  if (request.json !== undefined) return new TextEncoder().encode(JSON.stringify(request.json))
  if (request.body === undefined) return undefined
  return typeof request.body === "string" ? new TextEncoder().encode(request.body) : Uint8Array.from(request.body)
}

const urlOf = (baseUrl: string, request: HttpRequest): string => {
  const url = `${baseUrl.replace(/\/+$/, "")}${request.path}`
  if (request.query === undefined) return url
  const query = new URLSearchParams(request.query).toString()
  return query === "" ? url : `${url}${url.includes("?") ? "&" : "?"}${query}`
}

interface Prepared {
  readonly url: string
  readonly sent: Headers
  /** The same headers with keys replaced by `$VARIABLE` placeholders. */
  readonly shown: ReadonlyArray<readonly [string, string]>
  readonly body: Uint8Array<ArrayBuffer> | undefined
}

const prepare = (config: HttpConfig, request: HttpRequest): Prepared => {
  const body = encodeBody(request)
  const headers: Array<readonly [string, string, string]> = [] // name, sent value, shown value
  const auth = request.auth ?? "primary"
  if (auth === "primary") {
    headers.push(["Authorization", `Bearer ${config.apiKey}`, `Bearer $${KEY_VARIABLES.primary}`])
  } else if (auth === "second") {
    if (config.secondApiKey === undefined) throw new Error("this scenario needs --second-api-key")
    headers.push(["Authorization", `Bearer ${config.secondApiKey}`, `Bearer $${KEY_VARIABLES.second}`])
  } else if (auth !== "none") {
    headers.push(["Authorization", auth.authorization, auth.authorization])
  }
  if (request.json !== undefined) headers.push(["Content-Type", "application/json", "application/json"])
  if (request.chunked === true) headers.push(["Transfer-Encoding", "chunked", "chunked"])
  for (const [name, value] of Object.entries(request.headers ?? {})) headers.push([name, value, value])
  const sent = new Headers()
  // fetch sets Transfer-Encoding itself for a stream body; the header is there for the curl.
  for (const [name, value] of headers) if (name !== "Transfer-Encoding") sent.set(name, value)
  return { url: urlOf(config.baseUrl, request), sent, shown: headers.map(([name, , shown]) => [name, shown]), body }
}

/** A stream body needs `duplex: "half"` (undici's RequestInit has it; the DOM typings do not). */
const bodyInit = (body: Uint8Array<ArrayBuffer> | undefined, chunked: boolean): RequestInit => {
  if (body === undefined) return {}
  if (!chunked) return { body }
  const init = { body: new Blob([body]).stream(), duplex: "half" }
  return init
}

/** What is read of an answer: far more than any answer of the contract, far less than a hostile server can send. */
export const apiAnswerBounds = (timeoutMs: number): Bounds => ({
  timeoutMs,
  maxBytes: MAX_API_ANSWER_BYTES,
  what: "an API answer",
  advice: "no answer of the contract comes near that; the request's curl shows what the deployment sends"
})

/** Bodies longer than the recorded (evidence) cut, whole, by their recorded response: see `wholeBody`. */
const wholeBodies = new WeakMap<RecordedResponse, string>()

/** An answer's whole body as text (a report a scenario reads); the recorded `body` is cut for evidence. */
export const wholeBody = (response: RecordedResponse): string => wholeBodies.get(response) ?? response.body

const recordResponse = (answer: BoundedAnswer): RecordedResponse => {
  const text = new TextDecoder().decode(answer.body)
  const headers = Object.fromEntries(answer.headers.entries())
  const isJsonType = /^application\/([a-z.+-]*\+)?json\b/i.test(headers["content-type"] ?? "")
  let json: unknown = undefined
  let isJson = false
  if (isJsonType) {
    try {
      json = JSON.parse(text)
      isJson = true
    } catch {
      isJson = false
    }
  }
  const response = { status: answer.status, headers, body: truncate(text), json, isJson }
  if (response.body !== text) wholeBodies.set(response, text)
  return response
}

const describeRequestError = (error: unknown): string =>
  error instanceof Error && error.name === "TimeoutError" ? withCause("request timed out", error) : describeError(error)

export interface Http {
  /** Sends one request and records it; a network failure fails the scenario (with the curl). */
  readonly send: (request: HttpRequest) => Effect.Effect<Answered, ScenarioFailure>
}

export const makeHttp = (config: HttpConfig, record: (exchange: Exchange) => void): Http => {
  const once = (request: HttpRequest): Effect.Effect<Exchange> =>
    Effect.gen(function*() {
      const prepared = prepare(config, request)
      const startedAt = new Date()
      const recorded: RecordedRequest = {
        method: request.method,
        url: prepared.url,
        headers: Object.fromEntries(prepared.shown),
        body: prepared.body === undefined ? undefined : truncate(new TextDecoder().decode(prepared.body)),
        bodyBytes: prepared.body?.length ?? 0
      }
      const curl = toCurl({ method: request.method, url: prepared.url, headers: prepared.shown, body: prepared.body })
      const outcome = yield* Effect.result(Effect.tryPromise({
        try: (interrupted) =>
          fetchBounded(config.fetch, prepared.url, {
            method: request.method,
            headers: prepared.sent,
            ...bodyInit(prepared.body, request.chunked === true),
            signal: interrupted,
            redirect: "manual"
          }, apiAnswerBounds(config.requestTimeoutMs)).then(recordResponse),
        catch: describeRequestError
      }))
      const exchange: Exchange = {
        request: recorded,
        response: outcome._tag === "Success" ? outcome.success : undefined,
        error: outcome._tag === "Failure" ? outcome.failure : undefined,
        startedAt: startedAt.toISOString(),
        durationMs: Date.now() - startedAt.getTime(),
        curl
      }
      record(exchange)
      return exchange
    })

  /** A 429's Retry-After in ms (delay-seconds form), if it has a usable one. */
  const retryAfterMs = (exchange: Answered): number | undefined => {
    const header = exchange.response.headers["retry-after"]
    const seconds = header === undefined || !/^\d+$/.test(header.trim()) ? Number.NaN : Number(header)
    return Number.isFinite(seconds) ? seconds * 1000 : undefined
  }

  const rateLimited = (request: HttpRequest, exchange: Answered, retries: number, why: string): ScenarioFailure => {
    const header = exchange.response.headers["retry-after"]
    return failure(
      `${request.method} ${request.path}: the deployment rate-limited the kit (429${
        header === undefined ? ", no Retry-After" : `, Retry-After: ${header}`
      }) after ${retries} ${retries === 1 ? "wait" : "waits"}: ${why}`,
      {
        expected: "an answer other than 429 within the scenario's time (a 429 is waited out as its Retry-After says)",
        actual: `429 ${exchange.response.isJson ? show(exchange.response.json) : show(exchange.response.body)}`,
        exchange,
        rootCause: RATE_LIMITED
      }
    )
  }

  const send = (request: HttpRequest): Effect.Effect<Answered, ScenarioFailure> =>
    Effect.gen(function*() {
      let exchange = yield* once(request)
      for (
        let retries = 0;
        request.retryOn429 !== false && isAnswered(exchange) && exchange.response.status === 429;
        retries++
      ) {
        const wait = retryAfterMs(exchange)
        if (wait === undefined) {
          return yield* Effect.fail(rateLimited(request, exchange, retries, "it did not say when to retry"))
        }
        if (retries === MAX_429_RETRIES) {
          return yield* Effect.fail(rateLimited(request, exchange, retries, "it kept answering 429"))
        }
        if (config.deadline !== undefined && Date.now() + wait > config.deadline) {
          return yield* Effect.fail(
            rateLimited(request, exchange, retries, "its Retry-After ends after the scenario's time")
          )
        }
        yield* Effect.sleep(Duration.millis(Math.max(wait, 100)))
        exchange = yield* once(request)
      }
      if (!isAnswered(exchange)) {
        return yield* Effect.fail(failure(`${request.method} ${request.path} got no HTTP response`, {
          expected: "an HTTP response",
          actual: exchange.error ?? "no response",
          exchange
        }))
      }
      // The recorded exchange itself (not a copy): a failure that points at it is found among the recorded ones.
      return exchange
    })

  return { send }
}
