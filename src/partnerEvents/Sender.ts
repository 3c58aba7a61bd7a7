import { request as httpRequest } from "node:http"
import { request as httpsRequest } from "node:https"
import type { LookupFunction } from "node:net"
import { Effect } from "effect"

export interface WebhookPost {
  readonly url: URL
  readonly headers: Record<string, string>
  readonly body: string
  readonly timeoutMs: number
  /** Resolves the host and refuses forbidden addresses (live); undefined: the system resolver. */
  readonly lookup: LookupFunction | undefined
}

/** `responseExcerpt`: the start of the receiver's body (see `excerptOf`), null when none came. */
export type SendOutcome =
  | { readonly ok: true; readonly status: number; readonly responseExcerpt: string | null }
  | {
    readonly ok: false
    readonly status: number | null
    readonly error: string
    readonly responseExcerpt: string | null
    /** A 429's or 503's `Retry-After`, in seconds (delta-seconds or an HTTP date), when it had a readable one. */
    readonly retryAfterSeconds?: number
  }

/** `Retry-After` as seconds from `nowMs`: delta-seconds or an HTTP date; undefined when it is neither. */
export const retryAfterOf = (header: string | undefined, nowMs: number): number | undefined => {
  if (header === undefined) return undefined
  const text = header.trim()
  if (/^[0-9]{1,9}$/.test(text)) return Number(text)
  const at = Date.parse(text)
  return Number.isNaN(at) || !/[A-Za-z]/.test(text) ? undefined : Math.max(0, Math.ceil((at - nowMs) / 1000))
}

const TIMED_OUT = "timed out after"

/**
 * Why an attempt failed: the receiver's answer by class (`3xx`: a redirect, never followed, or any other answer below
 * 400), no complete answer in time, no connection, or a target the policy refused.
 */
export type FailureKind = "3xx" | "4xx" | "5xx" | "timeout" | "network" | "refused"

/** The kind of a failed outcome, from what `postWebhook` (or the static target check) wrote in it. */
export const failureKind = (outcome: Extract<SendOutcome, { readonly ok: false }>): FailureKind => {
  if (outcome.status !== null) {
    return outcome.status >= 500 ? "5xx" : outcome.status >= 400 ? "4xx" : "3xx"
  }
  if (outcome.error.startsWith("refused:")) return "refused"
  if (outcome.error.startsWith(TIMED_OUT)) return "timeout"
  return "network"
}

/** The most of a receiver's answer that is read (and thrown away): a receiver cannot make us buffer more. */
const MAX_RESPONSE_BYTES = 64 * 1024
/** The bytes of the body kept for its excerpt: 256 characters of UTF-8 take at most 1 KiB. */
const EXCERPT_BYTES = 1024
const EXCERPT_CHARACTERS = 256

const LINE_BREAKS = /[\t\n\r]+/g
// Control characters (C0, DEL, C1) and the bidirectional overrides and isolates, which could reorder what a page shows.
const UNPRINTABLE = /[\p{Cc}\u202a-\u202e\u2066-\u2069]/gu

/**
 * The first EXCERPT_CHARACTERS characters of a body's first bytes, read as UTF-8 (a character cut at the end of the
 * bytes kept is left out; an invalid sequence reads as U+FFFD), line breaks and tabs as a space, other control
 * characters removed, white space trimmed. Null for no text.
 */
export const excerptOf = (head: Buffer): string | null => {
  // A streaming decode holds back a character the bytes end inside of, instead of writing U+FFFD for it.
  const text = new TextDecoder("utf-8").decode(head, { stream: true })
  const printable = text.replace(LINE_BREAKS, " ").replace(UNPRINTABLE, "").trim()
  const excerpt = Array.from(printable).slice(0, EXCERPT_CHARACTERS).join("").trimEnd()
  return excerpt === "" ? null : excerpt
}

const describe = (error: NodeJS.ErrnoException): string => {
  if (error.code === "EWEBHOOKTARGET") return error.message
  return `${error.code ?? "error"}: ${error.message}`.slice(0, 200)
}

/**
 * One POST of a signed event. A 2xx is delivered; any other status, a redirect included (never followed), is a
 * failure with that status; a connection error, a refused target or no complete answer within `timeoutMs` is a
 * failure without one. Never fails as an Effect: the outcome says what happened, with the excerpt of the body that
 * came by then (its first EXCERPT_BYTES kept: reading stays bounded by MAX_RESPONSE_BYTES and the timeout).
 *
 * The timeout is a plain timer, held by node's timer list until it fires or is cleared. Not an `AbortSignal`:
 * on Node 20 a signal combining `AbortSignal.timeout(ms)` with another through `AbortSignal.any` can be collected while the
 * request hangs, and then nothing ends the attempt (a receiver that never answered held a delivery slot for good).
 */
export const postWebhook = (post: WebhookPost): Effect.Effect<SendOutcome> =>
  Effect.callback<SendOutcome>((resume) => {
    const request = (post.url.protocol === "https:" ? httpsRequest : httpRequest)(post.url, {
      method: "POST",
      headers: {
        ...post.headers,
        "content-type": "application/json",
        "content-length": String(Buffer.byteLength(post.body)),
        "user-agent": "cop-integrations-webhooks/1"
      },
      lookup: post.lookup
    })
    let settled = false
    // The body's first bytes, for the excerpt: at most EXCERPT_BYTES are kept, whatever the receiver sends.
    const head: Array<Buffer> = []
    let kept = 0
    const finish = (
      outcome:
        | { readonly ok: true; readonly status: number }
        | {
          readonly ok: false
          readonly status: number | null
          readonly error: string
          readonly retryAfterSeconds?: number
        }
    ) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      resume(Effect.succeed({ ...outcome, responseExcerpt: kept === 0 ? null : excerptOf(Buffer.concat(head)) }))
    }
    const timer = setTimeout(() => {
      finish({ ok: false, status: null, error: `${TIMED_OUT} ${post.timeoutMs} ms` })
      request.destroy()
    }, post.timeoutMs)
    request.on("error", (error: NodeJS.ErrnoException) => finish({ ok: false, status: null, error: describe(error) }))
    request.on("response", (response) => {
      const status = response.statusCode ?? 0
      let received = 0
      response.on("data", (chunk: Buffer) => {
        received += chunk.length
        if (kept < EXCERPT_BYTES) {
          const part = chunk.subarray(0, EXCERPT_BYTES - kept)
          head.push(Buffer.from(part))
          kept += part.length
        }
        if (received > MAX_RESPONSE_BYTES) response.destroy()
      })
      response.on("error", () => undefined)
      // A receiver that asks for time (429, 503) says how long: the next attempt waits at least that (Delivery).
      const retryAfter = status === 429 || status === 503
        ? retryAfterOf(response.headers["retry-after"], Date.now())
        : undefined
      const done = () =>
        finish(
          status >= 200 && status < 300
            ? { ok: true, status }
            : {
              ok: false,
              status,
              error: `answered HTTP ${status}`,
              ...(retryAfter === undefined ? {} : { retryAfterSeconds: retryAfter })
            }
        )
      response.on("end", done)
      response.on("close", done)
    })
    request.end(post.body)
    // Interrupted (the replica stops): drop the connection and the timer.
    return Effect.sync(() => {
      settled = true
      clearTimeout(timer)
      request.destroy()
    })
  })
