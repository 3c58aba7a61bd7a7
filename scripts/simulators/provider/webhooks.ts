/**
 * Signed webhooks, Bridge-style: `X-Webhook-Signature: t=<ms>,v0=<base64 RSA-SHA256 over "<t>.<raw body>">`,
 * signed with the simulator's own RSA key. Deliveries leave in order from one queue; a non-2xx answer or a
 * network failure is retried with backoff, each retry with a fresh timestamp and signature (a stale event keeps
 * its old timestamp on every attempt). Every delivery is logged for `GET /__sim/events`.
 *
 * Faults applied here: duplicates (the same event_id delivered twice), out-of-order (the next N events are held
 * and released in reverse order), stale timestamps.
 */
import {
  createPrivateKey,
  createPublicKey,
  createSign,
  generateKeyPairSync,
  type KeyObject,
  randomUUID
} from "node:crypto"
import type { WebhookEnvelope } from "./shapes.ts"
import type { SimulatorState } from "./state.ts"

export interface DeliveryAttempt {
  readonly attempt: number
  readonly at: string
  readonly timestamp_ms: number
  readonly status: number | null
  readonly error: string | null
}

/** One delivery of an event (a duplicate or a resend is another delivery with the same event_id). */
export interface SentEvent {
  readonly seq: number
  readonly event_id: string
  readonly event_category: string
  readonly event_type: string
  readonly event_object_id: string
  readonly event_object_status: string | null
  readonly event_created_at: string
  readonly reason: "state_change" | "duplicate" | "resend" | "emit"
  readonly stale: boolean
  /** How old the signature timestamp is made on every attempt of a stale delivery. */
  readonly stale_age_ms: number | null
  held: boolean
  readonly attempts: Array<DeliveryAttempt>
  delivered: boolean
  /** No further attempt will be made. */
  settled: boolean
  readonly body: string
}

export interface WebhookOptions {
  readonly privateKeyPem?: string | undefined
  readonly maxAttempts: number
  readonly backoffMs: ReadonlyArray<number>
  readonly timeoutMs: number
}

export const signatureHeader = (privateKey: KeyObject | string, timestampMs: number, rawBody: string): string => {
  const signer = createSign("RSA-SHA256")
  signer.update(`${timestampMs}.${rawBody}`)
  return `t=${timestampMs},v0=${signer.sign(privateKey, "base64")}`
}

export class WebhookSender {
  readonly publicKeyPem: string
  readonly privateKeyPem: string
  private readonly privateKey: KeyObject
  private readonly log: Array<SentEvent> = []
  private readonly queue: Array<SentEvent> = []
  private readonly held: Array<SentEvent> = []
  private readonly timers = new Set<NodeJS.Timeout>()
  private readonly abort = new AbortController()
  private pumping = false
  private seq = 0

  constructor(private readonly state: SimulatorState, private readonly options: WebhookOptions) {
    if (options.privateKeyPem !== undefined) {
      this.privateKey = createPrivateKey(options.privateKeyPem)
    } else {
      this.privateKey = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey
    }
    this.privateKeyPem = this.privateKey.export({ type: "pkcs8", format: "pem" }).toString()
    this.publicKeyPem = createPublicKey(this.privateKey).export({ type: "spki", format: "pem" }).toString()
  }

  static newEventId = (): string => randomUUID()

  /** Sends an event (subject to the duplicate, stale and out-of-order switches). */
  send(envelope: WebhookEnvelope, reason: "state_change" | "emit"): ReadonlyArray<SentEvent> {
    const faults = this.state.faults
    const stale = faults.stale.remaining > 0 ? faults.stale.ageMs : null
    if (stale !== null) faults.stale.remaining--
    const body = JSON.stringify(envelope)
    const deliveries = [this.record(envelope, body, reason, stale)]
    if (faults.duplicates.remaining > 0) {
      faults.duplicates.remaining--
      deliveries.push(this.record(envelope, body, "duplicate", stale))
    }
    if (faults.outOfOrder.remaining > 0) {
      faults.outOfOrder.remaining--
      for (const delivery of deliveries) {
        delivery.held = true
        this.held.push(delivery)
      }
      if (faults.outOfOrder.remaining === 0) this.flushHeld()
    } else {
      for (const delivery of deliveries) this.enqueue(delivery)
    }
    return deliveries
  }

  /** Delivers an already sent event again (same event_id and body), optionally with a stale timestamp. */
  resend(eventId: string, options: { readonly staleAgeMs: number | null }): SentEvent | undefined {
    const original = this.log.find((event) => event.event_id === eventId)
    if (original === undefined) return undefined
    const envelope = JSON.parse(original.body) as WebhookEnvelope
    const delivery = this.record(envelope, original.body, "resend", options.staleAgeMs)
    this.enqueue(delivery)
    return delivery
  }

  /** Releases the events held by the out-of-order switch, newest first. */
  flushHeld(): number {
    const released = this.held.splice(0, this.held.length).reverse()
    for (const delivery of released) {
      delivery.held = false
      this.enqueue(delivery)
    }
    return released.length
  }

  list(
    filter: { readonly category?: string | null; readonly objectId?: string | null } = {}
  ): ReadonlyArray<SentEvent> {
    return this.log.filter((event) =>
      (filter.category == null || event.event_category === filter.category) &&
      (filter.objectId == null || event.event_object_id === filter.objectId)
    )
  }

  close(): void {
    this.abort.abort()
    for (const timer of this.timers) clearTimeout(timer)
    this.timers.clear()
    this.queue.length = 0
  }

  private record(
    envelope: WebhookEnvelope,
    body: string,
    reason: SentEvent["reason"],
    staleAgeMs: number | null
  ): SentEvent {
    const delivery: SentEvent = {
      seq: ++this.seq,
      event_id: envelope.event_id,
      event_category: envelope.event_category,
      event_type: envelope.event_type,
      event_object_id: envelope.event_object_id,
      event_object_status: envelope.event_object_status,
      event_created_at: envelope.event_created_at,
      reason,
      stale: staleAgeMs !== null,
      stale_age_ms: staleAgeMs,
      held: false,
      attempts: [],
      delivered: false,
      settled: false,
      body
    }
    this.log.push(delivery)
    return delivery
  }

  private enqueue(delivery: SentEvent): void {
    this.queue.push(delivery)
    void this.pump()
  }

  private async pump(): Promise<void> {
    if (this.pumping) return
    this.pumping = true
    try {
      for (let next = this.queue.shift(); next !== undefined; next = this.queue.shift()) {
        if (this.abort.signal.aborted) return
        await this.attempt(next)
      }
    } finally {
      this.pumping = false
    }
  }

  private async attempt(delivery: SentEvent): Promise<void> {
    const url = this.state.webhookUrl
    const attempt = delivery.attempts.length + 1
    const timestampMs = Date.now() - (delivery.stale_age_ms ?? 0)
    const at = new Date().toISOString()
    if (url === null) {
      delivery.attempts.push({
        attempt,
        at,
        timestamp_ms: timestampMs,
        status: null,
        error: "no webhook URL configured"
      })
      delivery.settled = true
      return
    }
    let status: number | null = null
    let error: string | null = null
    try {
      const response = await fetch(url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "x-webhook-signature": signatureHeader(this.privateKey, timestampMs, delivery.body)
        },
        body: delivery.body,
        signal: AbortSignal.any([this.abort.signal, AbortSignal.timeout(this.options.timeoutMs)])
      })
      status = response.status
      await response.arrayBuffer().catch(() => undefined)
    } catch (cause) {
      error = cause instanceof Error ? cause.message : String(cause)
    }
    if (this.abort.signal.aborted) return
    delivery.attempts.push({ attempt, at, timestamp_ms: timestampMs, status, error })
    if (status !== null && status >= 200 && status < 300) {
      delivery.delivered = true
      delivery.settled = true
      return
    }
    if (attempt >= this.options.maxAttempts) {
      delivery.settled = true
      return
    }
    const backoff = this.options.backoffMs
    const delay = backoff[Math.min(attempt - 1, backoff.length - 1)] ?? 1000
    const timer = setTimeout(() => {
      this.timers.delete(timer)
      void this.attempt(delivery)
    }, delay)
    this.timers.add(timer)
  }
}
