/**
 * Every answer the kit reads (from a deployment, a receiver or a state probe) is read here: as a stream, never more than
 * a limit, and within one time limit that runs from sending the request to the answer's last byte. A broken or hostile
 * server cannot make a command buffer gigabytes or wait for ever.
 *
 * The time limit is a plain timer, not `AbortSignal.timeout` combined through `AbortSignal.any`: on Node 20 such a
 * signal can be garbage-collected while the request waits, and then it never fires (test/http.test.ts).
 */

/** The most the kit reads of an API answer: a page of 500 events of ~3 KB each is under 2 MB. */
export const MAX_API_ANSWER_BYTES = 8 * 1024 * 1024

/** The most the kit reads of a receiver's answer (its status is what counts), as much as the API's own deliveries. */
export const MAX_RECEIVER_ANSWER_BYTES = 64 * 1024

export interface Bounds {
  /** From sending the request to the answer's last byte; then it fails with a TimeoutError. */
  readonly timeoutMs: number
  readonly maxBytes: number
  /** What the answer is, for the message: "an API answer". */
  readonly what: string
  /** What to do about an answer over the limit, for the message: "is --base-url an Integrations API deployment?". */
  readonly advice: string
  /**
   * Past `maxBytes`: "fail" (default) rejects with AnswerTooLarge; "cut" stops reading and keeps what was read, the
   * status standing (a receiver's answer, as the API's deliveries read it).
   */
  readonly beyondLimit?: "fail" | "cut"
}

export interface BoundedAnswer {
  readonly status: number
  readonly headers: Headers
  /** At most `maxBytes`. */
  readonly body: Uint8Array<ArrayBuffer>
  /** Set when the answer was longer than `maxBytes` (and `beyondLimit` is "cut"): why the rest was not read. */
  readonly cut: string | undefined
}

/** The answer was longer than the kit reads; the message is one line naming the URL, the limit and what to do. */
export class AnswerTooLarge extends Error {
  override readonly name = "AnswerTooLarge"
}

const sizeText = (bytes: number) => bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MiB` : `${bytes / 1024} KiB`

const tooLargeMessage = (method: string, url: string, bounds: Bounds) => {
  const limit = sizeText(bounds.maxBytes)
  return `${method} ${url} answered more than ${limit}, the most the kit reads of ${bounds.what}: ${bounds.advice}`
}

/** Reads the stream up to `maxBytes`; `over` when there was more (the stream is then cancelled). */
const readUpTo = async (stream: ReadableStream<Uint8Array> | null, maxBytes: number) => {
  const chunks: Array<Uint8Array> = []
  let length = 0
  let over = false
  if (stream !== null) {
    const reader = stream.getReader()
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      if (length + value.length > maxBytes) {
        chunks.push(value.subarray(0, maxBytes - length))
        length = maxBytes
        over = true
        void reader.cancel().catch(() => undefined)
        break
      }
      chunks.push(value)
      length += value.length
    }
  }
  const body = new Uint8Array(length)
  let at = 0
  for (const chunk of chunks) {
    body.set(chunk, at)
    at += chunk.length
  }
  return { body, over }
}

const urlText = (input: string | URL | Request) => input instanceof Request ? input.url : String(input)

/** Methods a client may send again when their connection closed before any answer (RFC 9110 §9.2.2, RFC 9112 §9.3.1). */
const IDEMPOTENT_METHODS = new Set(["GET", "HEAD", "OPTIONS"])

/** Codes of a connection the server closed or reset, as fetch (undici) gives them in its error's cause. */
const CONNECTION_CLOSED = new Set(["ECONNRESET", "EPIPE", "UND_ERR_SOCKET"])

/**
 * fetch failed because the connection was closed under the request, before any answer: the race of HTTP/1.1
 * keep-alive, where a server (or a proxy in front of it) closes an idle connection just as the client sends on it. A
 * busy kit run met it against this service (the server's idle timer fired before it read the request).
 */
const closedBeforeAnswer = (error: unknown): boolean =>
  error instanceof TypeError && error.cause instanceof Error && "code" in error.cause &&
  typeof error.cause.code === "string" && CONNECTION_CLOSED.has(error.cause.code)

/** fetch, sent once more (on a new connection) when an idempotent request's connection closed before any answer. */
const fetchAgainIfClosed = async (
  fetchFn: typeof globalThis.fetch,
  url: string | URL | Request,
  init: RequestInit,
  method: string
): Promise<Response> => {
  try {
    return await fetchFn(url, init)
  } catch (error) {
    if (!IDEMPOTENT_METHODS.has(method) || init.signal?.aborted === true || !closedBeforeAnswer(error)) throw error
    return fetchFn(url, init)
  }
}

/**
 * `fetchFn(url, init)` and its answer's body, within `bounds`; a GET, HEAD or OPTIONS whose connection closed before
 * any answer is sent once more (see closedBeforeAnswer). `init.signal` interrupts it (it rejects with that
 * signal's reason); the time limit rejects with a TimeoutError DOMException; an answer over the limit rejects with
 * AnswerTooLarge (or is cut, see Bounds). A network error rejects as fetch does.
 */
export const fetchBounded = async (
  fetchFn: typeof globalThis.fetch,
  url: string | URL | Request,
  init: RequestInit,
  bounds: Bounds
): Promise<BoundedAnswer> => {
  const controller = new AbortController()
  const timer = setTimeout(
    () => controller.abort(new DOMException(`no complete answer within ${bounds.timeoutMs} ms`, "TimeoutError")),
    bounds.timeoutMs
  )
  const interrupted = init.signal ?? undefined
  const interrupt = () => controller.abort(interrupted?.reason)
  if (interrupted?.aborted === true) interrupt()
  else interrupted?.addEventListener("abort", interrupt, { once: true })
  const method = (init.method ?? (url instanceof Request ? url.method : "GET")).toUpperCase()
  try {
    const response = await fetchAgainIfClosed(fetchFn, url, { ...init, signal: controller.signal }, method)
    const tooLarge = tooLargeMessage(method, urlText(url), bounds)
    const declared = Number(response.headers.get("content-length") ?? Number.NaN)
    if (bounds.beyondLimit !== "cut" && declared > bounds.maxBytes) {
      controller.abort()
      throw new AnswerTooLarge(tooLarge)
    }
    const { body, over } = await readUpTo(response.body, bounds.maxBytes)
    if (over) {
      controller.abort()
      if (bounds.beyondLimit !== "cut") throw new AnswerTooLarge(tooLarge)
    }
    return { status: response.status, headers: response.headers, body, cut: over ? tooLarge : undefined }
  } finally {
    clearTimeout(timer)
    interrupted?.removeEventListener("abort", interrupt)
  }
}

/** Statuses whose Response cannot carry a body. */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304])

/** A `fetch` whose answers are read within `bounds` before it resolves (for clients that take a fetch function). */
export const boundedFetch =
  (fetchFn: typeof globalThis.fetch, bounds: Bounds): typeof globalThis.fetch => async (url, init) => {
    const answer = await fetchBounded(fetchFn, url, init ?? {}, bounds)
    return new Response(NULL_BODY_STATUSES.has(answer.status) ? null : answer.body, {
      status: answer.status,
      headers: answer.headers
    })
  }
