/**
 * Helpers for the provider simulator tests: a webhook receiver on loopback, calls to the simulator over real
 * HTTP, and bounded condition waits (no sleeps as synchronisation).
 */
import { createVerify } from "node:crypto"
import { createServer, type IncomingHttpHeaders } from "node:http"
import type { AddressInfo } from "node:net"
import { verifyProviderSignature } from "../../src/provider/bridge/Signature.ts"

export interface Delivery {
  readonly headers: IncomingHttpHeaders
  readonly rawBody: string
  readonly body: any
  /** What the service's own verifier (src/provider/bridge/Signature.ts) says of this delivery. */
  readonly verdict: string
  readonly answered: number
}

/** Waits until `probe` answers something other than undefined/false, polling every `intervalMs`, or throws. */
export const waitUntil = async <A>(
  what: string,
  probe: () => Promise<A | undefined | false> | A | undefined | false,
  { timeoutMs = 5000, intervalMs = 20 } = {}
): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  let last = ""
  for (;;) {
    try {
      const value = await probe()
      if (value !== undefined && value !== false) return value
    } catch (cause) {
      last = String(cause)
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${last}` : ""}`)
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs))
  }
}

/** RSA-SHA256 over "<t>.<raw body>", checked with node:crypto directly (independent of the service's code). */
export const verifyBridgeSignature = (publicKeyPem: string, header: string | undefined, rawBody: string): boolean => {
  const match = /^t=(\d+),v0=([A-Za-z0-9+/=]+)$/.exec(header ?? "")
  if (match === null) return false
  const verifier = createVerify("RSA-SHA256")
  verifier.update(`${match[1]}.${rawBody}`)
  return verifier.verify(publicKeyPem, Buffer.from(match[2]!, "base64"))
}

export const signatureTimestamp = (header: string | undefined): number => Number(/^t=(\d+),/.exec(header ?? "")?.[1])

/**
 * A webhook endpoint on 127.0.0.1 that records every delivery. By default it answers like the service does:
 * 200 when the service's verifier accepts the signature, 401 otherwise; `respond` overrides the status.
 */
export const startReceiver = async (publicKeyPem: string) => {
  const deliveries: Array<Delivery> = []
  let respond: ((delivery: Omit<Delivery, "answered">, index: number) => number) | undefined
  const server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => {
      const rawBody = Buffer.concat(chunks).toString("utf8")
      const header = req.headers["x-webhook-signature"]
      const check = verifyProviderSignature({
        header: typeof header === "string" ? header : undefined,
        rawBody,
        publicKeyPem,
        nowMs: Date.now()
      })
      const verdict = check._tag === "Valid" ? "valid" : check.reason
      let body: unknown
      try {
        body = JSON.parse(rawBody)
      } catch {
        body = undefined
      }
      const partial = { headers: req.headers, rawBody, body, verdict }
      const answered = respond?.(partial, deliveries.length) ?? (check._tag === "Valid" ? 200 : 401)
      deliveries.push({ ...partial, answered })
      res.writeHead(answered, { "content-type": "application/json" })
      res.end(JSON.stringify({ received: true }))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/provider`
  return {
    url,
    deliveries,
    /** Deliveries about one object (customer or transfer id). */
    about: (objectId: string) => deliveries.filter((d) => d.body?.event_object_id === objectId),
    waitFor: (what: string, count: number, filter: (d: Delivery) => boolean = () => true, timeoutMs = 5000) =>
      waitUntil(what, () => {
        const found = deliveries.filter(filter)
        return found.length >= count ? found : undefined
      }, { timeoutMs }),
    setResponder: (next: typeof respond) => {
      respond = next
    },
    close: () => {
      server.closeAllConnections()
      return new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}

export type Receiver = Awaited<ReturnType<typeof startReceiver>>

export interface SimAnswer {
  readonly status: number
  readonly headers: Headers
  readonly body: any
  readonly text: string
}

/** One request to the simulator. /v0 calls carry the Api-Key unless `apiKey: null`. */
export const request = async (
  sim: { readonly url: string; readonly apiKey: string },
  path: string,
  options: {
    readonly method?: string
    readonly body?: unknown
    readonly idempotencyKey?: string
    readonly apiKey?: string | null
    readonly signal?: AbortSignal
  } = {}
): Promise<SimAnswer> => {
  const headers: Record<string, string> = {}
  const apiKey = options.apiKey === undefined ? sim.apiKey : options.apiKey
  if (apiKey !== null && path.startsWith("/v0/")) headers["api-key"] = apiKey
  if (options.idempotencyKey !== undefined) headers["idempotency-key"] = options.idempotencyKey
  let body: string | undefined
  if (options.body !== undefined) {
    body = typeof options.body === "string" ? options.body : JSON.stringify(options.body)
    headers["content-type"] = "application/json"
  }
  const response = await fetch(`${sim.url}${path}`, {
    method: options.method ?? (body === undefined ? "GET" : "POST"),
    headers,
    ...(body === undefined ? {} : { body }),
    ...(options.signal === undefined ? {} : { signal: options.signal })
  })
  const text = await response.text()
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    parsed = undefined
  }
  return { status: response.status, headers: response.headers, body: parsed, text }
}

/** The simulator's log of sent events (`GET /__sim/events`), optionally about one object. */
export const simEvents = async (sim: { readonly url: string; readonly apiKey: string }, objectId?: string) => {
  const query = objectId === undefined ? "" : `?event_object_id=${objectId}`
  const answer = await request(sim, `/__sim/events${query}`)
  return answer.body.data as Array<{
    seq: number
    event_id: string
    event_category: string
    event_object_id: string
    event_object_status: string | null
    reason: string
    stale: boolean
    held: boolean
    delivered: boolean
    settled: boolean
    attempts: Array<{ attempt: number; status: number | null; timestamp_ms: number; error: string | null }>
  }>
}
