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

export type SendOutcome =
  | { readonly ok: true; readonly status: number }
  | { readonly ok: false; readonly status: number | null; readonly error: string }

/** The most of a receiver's answer that is read (and thrown away): a receiver cannot make us buffer more. */
const MAX_RESPONSE_BYTES = 64 * 1024

const describe = (error: NodeJS.ErrnoException): string => {
  if (error.code === "EWEBHOOKTARGET") return error.message
  return `${error.code ?? "error"}: ${error.message}`.slice(0, 200)
}

/**
 * One POST of a signed event. A 2xx is delivered; any other status, a redirect included (never followed), is a
 * failure with that status; a connection error, a refused target or no complete answer within `timeoutMs` is a
 * failure without one. Never fails as an Effect: the outcome says what happened.
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
    const finish = (outcome: SendOutcome) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      resume(Effect.succeed(outcome))
    }
    const timer = setTimeout(() => {
      finish({ ok: false, status: null, error: `timed out after ${post.timeoutMs} ms` })
      request.destroy()
    }, post.timeoutMs)
    request.on("error", (error: NodeJS.ErrnoException) => finish({ ok: false, status: null, error: describe(error) }))
    request.on("response", (response) => {
      const status = response.statusCode ?? 0
      let received = 0
      response.on("data", (chunk: Buffer) => {
        received += chunk.length
        if (received > MAX_RESPONSE_BYTES) response.destroy()
      })
      response.on("error", () => undefined)
      const done = () =>
        finish(
          status >= 200 && status < 300 ? { ok: true, status } : { ok: false, status, error: `answered HTTP ${status}` }
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
