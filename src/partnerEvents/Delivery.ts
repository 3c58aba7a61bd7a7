import { SqlClient } from "effect/sql"
import { Cause, Effect, Option, type Redacted, Ref, Result } from "effect"
import { now } from "../base/Clock.ts"
import { currentTraceparent, withWorkSpan } from "../base/Tracing.ts"
import { AppConfig } from "../config/Config.ts"
import { type Claimed, DeliveryRepo } from "./DeliveryRepo.ts"
import { countAttempt, countEndpointDisabled, type DeliveryOutcome } from "./DeliveryMetrics.ts"
import { failureKind, postWebhook, type SendOutcome } from "./Sender.ts"
import { Outbox } from "../outbox/Outbox.ts"
import { AuditLog } from "../auth/AuditLog.ts"
import { disableEndpoint } from "./EndpointDisabling.ts"
import { signatureHeaders } from "./Signing.ts"
import { WebhookSigningKey } from "./SigningKey.ts"
import { WebhookTargets } from "./WebhookTargets.ts"
import { idleUntil } from "../background/PollLoop.ts"
import { WorkSignal } from "../background/WorkSignal.ts"

/** Deliveries sent at once by one replica. */
export const DELIVERY_CONCURRENCY = 16
/**
 * Attempts in flight at once to one endpoint, and to the endpoints of one integration, counted over every replica
 * (the unexpired leases). A receiver that hangs holds at most these many slots until its attempts time out; the
 * other partners' deliveries take the rest.
 */
export const DELIVERY_PER_ENDPOINT = 4
export const DELIVERY_PER_INTEGRATION = 8
/** The longest pause between two attempts of one delivery (before jitter). */
const MAX_RETRY_DELAY_MS = 6 * 60 * 60 * 1000

/**
 * Exponential backoff with jitter: `base × 2^(attempts−1)`, capped at 6 hours, then a random 50–100 % of it, so
 * receivers that failed together are not retried in lockstep. With the 5 s default: 5 s, 10 s, 20 s, … then every
 * 3–6 hours until the retry window (3 days) ends.
 */
export const retryDelayMs = (attempts: number, baseMs: number, random: number = Math.random()): number => {
  const ceiling = Math.min(MAX_RETRY_DELAY_MS, baseMs * 2 ** Math.min(attempts - 1, 30))
  return Math.round(ceiling * (0.5 + random / 2))
}

/**
 * The pause before the next attempt: the backoff, or the receiver's `Retry-After` when it asks for longer, within the
 * schedule's longest pause (a receiver cannot push its retries out of the retry window by asking for days).
 */
export const nextAttemptDelayMs = (
  attempts: number,
  baseMs: number,
  retryAfterSeconds: number | undefined,
  random: number = Math.random()
): number => {
  const backoff = retryDelayMs(attempts, baseMs, random)
  return retryAfterSeconds === undefined
    ? backoff
    : Math.max(backoff, Math.min(retryAfterSeconds * 1000, MAX_RETRY_DELAY_MS))
}

/** What an attempt's transaction wrote. */
interface Recorded {
  readonly outcome: DeliveryOutcome
  readonly endpointDisabled: boolean
}

const DELIVERED: Recorded = { outcome: "delivered", endpointDisabled: false }

const secretsOf = (delivery: Claimed, at: Date): ReadonlyArray<Redacted.Redacted<string>> =>
  delivery.previous_secret !== null && delivery.previous_secret_expires_at !== null &&
    delivery.previous_secret_expires_at.getTime() > at.getTime()
    ? [delivery.secret, delivery.previous_secret]
    : [delivery.secret]

/**
 * Sends pending deliveries, on every replica. A delivery is claimed with a lease (`leased_until`) in a short
 * transaction and sent outside any transaction: a replica that dies mid-send leaves it to be claimed again when
 * the lease ends (the receiver may see it twice, with the same `webhook-id`). A delivery waits while an earlier
 * one of the same resource to the same endpoint is pending, so a receiver sees a payout's events in order.
 */
export const makeDelivery = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const deliveries = yield* DeliveryRepo
  const config = yield* AppConfig
  const targets = yield* WebhookTargets
  const signal = yield* WorkSignal
  const outbox = yield* Outbox
  const audit = yield* AuditLog
  const signingKey = yield* WebhookSigningKey
  const leaseMs = config.webhookTimeoutMs * 2 + 1000
  const windowMs = config.webhookRetryWindowSeconds * 1000

  /** Disabled by the service (see EndpointDisabling), in the attempt's transaction. */
  const disable = (delivery: Claimed, at: Date, reason: string) =>
    disableEndpoint(delivery.endpoint_id, reason, at).pipe(
      Effect.provideService(DeliveryRepo, deliveries),
      Effect.provideService(Outbox, outbox),
      Effect.provideService(AuditLog, audit)
    )

  /**
   * Retried until the window after the event closes; an endpoint failing for the whole window (or for the whole
   * window of an event it gives up) is disabled, and one whose receiver answers 410 Gone at once.
   */
  const failed = (delivery: Claimed, at: Date, outcome: Extract<SendOutcome, { readonly ok: false }>) =>
    Effect.gen(function*() {
      if (outcome.status === 410) {
        const endpointDisabled = yield* disable(
          delivery,
          at,
          `disabled ${at.toISOString()}: the receiver answered 410 Gone`
        )
        return { outcome: "failed", endpointDisabled } satisfies Recorded
      }
      const giveUp = at.getTime() - delivery.event_created_at.getTime() >= windowMs
      const nextAt = new Date(
        at.getTime() + nextAttemptDelayMs(delivery.attempts, config.webhookRetryBaseMs, outcome.retryAfterSeconds)
      )
      yield* giveUp ? deliveries.markFailed(delivery.seq, at) : deliveries.retryAt(delivery.seq, nextAt)
      const recorded: Recorded = { outcome: giveUp ? "failed" : "retrying", endpointDisabled: false }
      const failingSince = yield* deliveries.markFailing(delivery.endpoint_id, at)
      if (Option.isNone(failingSince)) return recorded
      // Failing for the window, or for this event's whole window: it is given up and nothing succeeded since its
      // first attempt failed (a late first attempt, under load or behind a backlog, must not leave it enabled).
      const failedThroughout = at.getTime() - failingSince.value.getTime() >= windowMs ||
        (giveUp && failingSince.value.getTime() <= (yield* deliveries.firstFailureOf(delivery)).getTime())
      if (!failedThroughout) return recorded
      const days = Math.round((config.webhookRetryWindowSeconds / 86_400) * 10) / 10
      const endpointDisabled = yield* disable(
        delivery,
        at,
        `disabled ${at.toISOString()}: every delivery failed for ${days} days (last: ${outcome.error})`
      )
      return { ...recorded, endpointDisabled }
    })

  /**
   * One attempt, in a span continuing the trace of the write that recorded the event (its `traceparent`), which the
   * receiver gets in the request's `traceparent` header (none while tracing is off).
   */
  const send = (delivery: Claimed) =>
    Effect.gen(function*() {
      const startedAt = yield* now
      const traceparent = yield* currentTraceparent
      const signV1a = delivery.signature_scheme === "v1a" ? (yield* signingKey.current).signV1a : undefined
      const outcome: SendOutcome = yield* Result.match(targets.checkStatic(delivery.url), {
        onFailure: (reason) =>
          Effect.succeed<SendOutcome>({
            ok: false,
            status: null,
            error: `refused: url ${reason}`,
            responseExcerpt: null
          }),
        onSuccess: (url) =>
          postWebhook({
            url,
            body: delivery.body,
            timeoutMs: config.webhookTimeoutMs,
            lookup: targets.lookup,
            headers: {
              ...signatureHeaders({
                eventId: delivery.event_id,
                timestampSeconds: Math.floor(startedAt.getTime() / 1000),
                body: delivery.body,
                secrets: secretsOf(delivery, startedAt),
                signV1a
              }),
              ...(traceparent === null ? {} : { traceparent })
            }
          })
      })
      yield* Effect.annotateCurrentSpan({
        "webhook.outcome": outcome.ok ? "delivered" : "failed",
        ...(outcome.status === null ? {} : { "http.response.status_code": outcome.status })
      })
      const at = yield* now
      const durationMs = at.getTime() - startedAt.getTime()
      const reason = outcome.ok ? "2xx" : failureKind(outcome)
      // Counted once its outcome is committed; one that could not be written is `unrecorded` (sent again later).
      const recorded = yield* Effect.andThen(
        deliveries.recordAttempt(delivery, startedAt, durationMs, outcome),
        outcome.ok
          ? Effect.as(deliveries.succeeded(delivery, at), DELIVERED)
          : failed(delivery, at, outcome)
      ).pipe(
        sql.withTransaction,
        Effect.tapCause(() => Effect.sync(() => countAttempt("unrecorded", reason, durationMs / 1000)))
      )
      countAttempt(recorded.outcome, reason, durationMs / 1000)
      if (recorded.endpointDisabled) countEndpointDisabled()
    }).pipe(
      withWorkSpan(`webhook ${delivery.event_type}`, delivery.traceparent, {
        "webhook.event_type": delivery.event_type,
        "webhook.event_id": delivery.event_id,
        "webhook.endpoint_id": delivery.endpoint_id,
        "webhook.attempt": delivery.attempts
      })
    )

  const inFlight = yield* Ref.make(0)
  const scope = yield* Effect.scope

  /**
   * Claims as many due deliveries as there is room for (within the caps) and sends each in its own fiber, so a slow
   * receiver holds some of the DELIVERY_CONCURRENCY slots, not the others' turn. Answers how many it claimed and
   * whether that filled the room (more may be due).
   */
  const round = Effect.gen(function*() {
    const room = DELIVERY_CONCURRENCY - (yield* Ref.get(inFlight))
    if (room <= 0) return { claimed: 0, full: false }
    const at = yield* now
    const due = yield* deliveries.claim({
      at,
      leasedUntil: new Date(at.getTime() + leaseMs),
      limit: room,
      perEndpoint: DELIVERY_PER_ENDPOINT,
      perIntegration: DELIVERY_PER_INTEGRATION
    })
    yield* Ref.update(inFlight, (n) => n + due.length)
    for (const delivery of due) {
      yield* send(delivery).pipe(
        // Unrecorded (the database failed): the lease runs out and the delivery is claimed again.
        Effect.catchCause((cause) =>
          Effect.logWarning(`webhook delivery not recorded: ${String(Cause.squash(cause))}`.slice(0, 300)).pipe(
            Effect.annotateLogs({ eventId: delivery.event_id, endpointId: delivery.endpoint_id })
          )
        ),
        // A finished delivery frees a slot and may unblock the next event of its resource: look again now.
        Effect.ensuring(Effect.andThen(Ref.update(inFlight, (n) => n - 1), signal.wake)),
        Effect.forkIn(scope)
      )
    }
    return { claimed: due.length, full: due.length === room }
  })

  /**
   * Rounds until one comes back short, so a backlog drains without waiting for the next tick. Busy when it claimed
   * a delivery or every slot is taken; otherwise, when the next pending delivery is due.
   */
  const runDue = Effect.gen(function*() {
    let claimed = 0
    while (true) {
      const result = yield* round
      claimed += result.claimed
      if (!result.full) break
    }
    if (claimed > 0 || (yield* Ref.get(inFlight)) >= DELIVERY_CONCURRENCY) return { busy: true } as const
    return yield* idleUntil(yield* Effect.orDie(deliveries.nextDue))
  })

  return { runDue } as const
})
