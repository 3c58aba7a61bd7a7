/** One operation called over HTTP: the URL from the contract's table, the key, an `Idempotency-Key` made once per
 *  call and sent on each of its retries, and retries of 408, 429 and 503 that wait what `Retry-After` asks. */
import { type ErrorBody, IntegrationsApiError, IntegrationsConnectionError } from "./errors.ts"
import { type OperationId, operationTable } from "./generated/operations.ts"
import { newIdempotencyKey, sleep } from "./platform.ts"

export interface ClientOptions {
  /** The integration's API key (`cop_test_pk_…` or `cop_live_pk_…`). */
  readonly apiKey: string
  /** The deployment, e.g. `https://sandbox.example.com` (default `http://127.0.0.1:8787`, `npm start`'s). */
  readonly baseUrl?: string
  /** Retries of one call after a 408, 429 or 503, or after no answer when the call is safe to repeat (default 3). */
  readonly maxRetries?: number
  /** The longest wait before a retry (default 30,000 ms): a `Retry-After` asking more is not waited for, the error is
   *  thrown at once with its `retryAfterSeconds`. */
  readonly maxRetryDelayMs?: number
  /** Each attempt's time limit (default 60,000 ms). */
  readonly timeoutMs?: number
  /** Called before each retry: what failed and how long the client waits. */
  readonly onRetry?: (retry: RetryNotice) => void
  /** The `fetch` to use (default the global one). */
  readonly fetch?: typeof fetch
}

export interface RetryNotice {
  readonly operationId: OperationId
  /** 1 for the first retry. */
  readonly retry: number
  /** The status that is retried, or `undefined` when there was no answer. */
  readonly status: number | undefined
  readonly delayMs: number
  readonly idempotencyKey: string | undefined
}

export interface CallOptions {
  /** The call's `Idempotency-Key`, where the operation takes one (default: a new UUID per call, the same on its
   *  retries). Pass your own (an order id) to make a call safe to repeat across restarts of your process too. */
  readonly idempotencyKey?: string
  /** Mock mode's `X-Mock-Scenario` (ignored by a live deployment). */
  readonly mockScenario?: "market_closed" | "requote" | "provider_unavailable"
  readonly signal?: AbortSignal
}

export interface Request {
  readonly path?: Readonly<Record<string, string>>
  readonly query?: object
  readonly body?: unknown
  readonly accept?: string
}

const RETRIED_STATUSES = new Set([408, 429, 503])

export class Transport {
  private readonly baseUrl: string
  private readonly fetch: typeof fetch
  private readonly maxRetries: number
  private readonly maxRetryDelayMs: number
  private readonly timeoutMs: number

  constructor(private readonly options: ClientOptions) {
    this.baseUrl = (options.baseUrl ?? "http://127.0.0.1:8787").replace(/\/+$/, "")
    this.fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init))
    this.maxRetries = options.maxRetries ?? 3
    this.maxRetryDelayMs = options.maxRetryDelayMs ?? 30_000
    this.timeoutMs = options.timeoutMs ?? 60_000
  }

  /** The 2xx answer of `operationId`, after retries; anything else is thrown as an `IntegrationsApiError`. */
  async send(operationId: OperationId, request: Request, options: CallOptions = {}): Promise<Response> {
    const spec = operationTable[operationId]
    const idempotencyKey = spec.idempotencyKey ? options.idempotencyKey ?? await newIdempotencyKey() : undefined
    // Without an answer, only a call that cannot take effect twice is sent again.
    const repeatable = spec.method === "GET" || spec.method === "DELETE" || idempotencyKey !== undefined
    const url = this.url(spec.path, request)
    const headers = this.headers(request, idempotencyKey, options)
    const body = request.body === undefined ? undefined : JSON.stringify(request.body)
    for (let retry = 1;; retry++) {
      const canRetry = retry <= this.maxRetries
      let response: Response
      try {
        response = await this.fetch(url, {
          method: spec.method,
          headers,
          ...(body === undefined ? {} : { body }),
          signal: withTimeout(options.signal, this.timeoutMs)
        })
      } catch (cause) {
        if (options.signal?.aborted === true) throw cause
        if (!repeatable || !canRetry) throw new IntegrationsConnectionError(operationId, cause)
        await this.wait({ operationId, retry, status: undefined, delayMs: backoff(retry), idempotencyKey }, options)
        continue
      }
      if (response.ok) return response
      const error = await apiError(operationId, response)
      const delayMs = error.retryAfterSeconds === undefined ? backoff(retry) : error.retryAfterSeconds * 1000
      if (!RETRIED_STATUSES.has(response.status) || !canRetry || delayMs > this.maxRetryDelayMs) throw error
      await this.wait({ operationId, retry, status: response.status, delayMs, idempotencyKey }, options)
    }
  }

  /** The JSON a 2xx carries (`undefined` for an empty one, as a 204's). */
  async json<A>(operationId: OperationId, request: Request, options?: CallOptions): Promise<A> {
    const response = await this.send(operationId, request, options)
    const text = await response.text()
    return (text === "" ? undefined : JSON.parse(text)) as A
  }

  private async wait(notice: RetryNotice, options: CallOptions) {
    this.options.onRetry?.(notice)
    await sleep(notice.delayMs, options.signal)
  }

  private url(template: string, request: Request): string {
    const path = template.replace(/\{(\w+)\}/g, (_, name: string) => {
      const value = request.path?.[name]
      if (value === undefined) throw new TypeError(`the path parameter ${name} is missing`)
      return encodeURIComponent(value)
    })
    const search = new URLSearchParams()
    for (const [name, value] of Object.entries(request.query ?? {})) {
      if (value === undefined || value === null) continue
      for (const each of Array.isArray(value) ? value : [value]) search.append(name, String(each))
    }
    const query = search.toString()
    return `${this.baseUrl}${path}${query === "" ? "" : `?${query}`}`
  }

  private headers(request: Request, idempotencyKey: string | undefined, options: CallOptions) {
    const headers: Record<string, string> = {
      authorization: `Bearer ${this.options.apiKey}`,
      accept: request.accept ?? "application/json"
    }
    if (request.body !== undefined) headers["content-type"] = "application/json"
    if (idempotencyKey !== undefined) headers["idempotency-key"] = idempotencyKey
    if (options.mockScenario !== undefined) headers["x-mock-scenario"] = options.mockScenario
    return headers
  }
}

/** Exponential back-off with jitter for a retry no `Retry-After` paces: about 0.5 s, 1 s, 2 s … up to 8 s. */
const backoff = (retry: number): number =>
  Math.round(Math.min(8000, 500 * 2 ** (retry - 1)) * (0.5 + Math.random() / 2))

/**
 * An attempt's signal: aborted after `ms`, or when the caller's `signal` aborts. Built by hand, not with
 * `AbortSignal.any` (Node 18 lacks it, and on Node 20 a timeout signal inside it can be collected and never fire). The
 * timer does not keep a process alive, and it runs on while the answer's body is read, which it also bounds.
 */
const withTimeout = (signal: AbortSignal | undefined, ms: number): AbortSignal => {
  const attempt = new AbortController()
  const timer: unknown = setTimeout(
    () => attempt.abort(new DOMException(`no answer within ${ms} ms`, "TimeoutError")),
    ms
  )
  ;(timer as { unref?: () => void }).unref?.()
  if (signal !== undefined) {
    const onAbort = () => attempt.abort(signal.reason)
    if (signal.aborted) onAbort()
    else signal.addEventListener("abort", onAbort, { once: true })
    attempt.signal.addEventListener("abort", () => signal.removeEventListener("abort", onAbort), { once: true })
  }
  return attempt.signal
}

/** `Retry-After` as seconds: a whole number of seconds, or an HTTP date from now. */
export const retryAfterSeconds = (value: string | null, now: number = Date.now()): number | undefined => {
  if (value === null) return undefined
  if (/^\d+$/.test(value.trim())) return Number(value.trim())
  const at = Date.parse(value)
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000))
}

const apiError = async (operationId: OperationId, response: Response): Promise<IntegrationsApiError> => {
  const text = await response.text().catch(() => "")
  return new IntegrationsApiError({
    operationId,
    status: response.status,
    body: errorBodyOf(text),
    requestId: response.headers.get("x-request-id") ?? undefined,
    retryAfterSeconds: retryAfterSeconds(response.headers.get("retry-after"))
  })
}

const errorBodyOf = (text: string): ErrorBody | string => {
  try {
    const parsed: unknown = JSON.parse(text)
    if (typeof parsed === "object" && parsed !== null && typeof (parsed as ErrorBody).error === "string") {
      return parsed as ErrorBody
    }
  } catch {
    // not JSON: the text itself
  }
  return text
}
