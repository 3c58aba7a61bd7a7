import { SqlClient, SqlSchema } from "@effect/sql"
import { Cause, Effect, Either, type Redacted, Ref, Schema } from "effect"
import { now } from "../base/Clock.ts"
import { AppConfig } from "../config/Config.ts"
import { postWebhook, type SendOutcome } from "./Sender.ts"
import { signatureHeaders } from "./Signing.ts"
import { WebhookTargets } from "./WebhookTargets.ts"
import { idleUntil } from "../work/PollLoop.ts"
import { WorkSignal } from "../work/WorkSignal.ts"

/** Deliveries sent at once by one replica. */
export const DELIVERY_CONCURRENCY = 16
/**
 * Attempts in flight at once to one endpoint, and to the endpoints of one integration, counted over every replica
 * (the unexpired leases). A receiver that hangs holds at most these many slots until its attempts time out; the
 * other partners' deliveries take the rest.
 */
export const DELIVERY_PER_ENDPOINT = 4
export const DELIVERY_PER_INTEGRATION = 8
/** Claims take turns on this lock, so each counts the leases the one before it took (on any replica). */
const CLAIM_LOCK = "webhook deliveries: claim"
/** The longest pause between two attempts of one delivery (before jitter). */
const MAX_RETRY_DELAY_MS = 6 * 60 * 60 * 1000

const Claimed = Schema.Struct({
  seq: Schema.String,
  attempts: Schema.Number,
  endpoint_id: Schema.String,
  event_id: Schema.String,
  body: Schema.String,
  event_created_at: Schema.DateFromSelf,
  url: Schema.String,
  secret: Schema.Redacted(Schema.String),
  previous_secret: Schema.NullOr(Schema.Redacted(Schema.String)),
  previous_secret_expires_at: Schema.NullOr(Schema.DateFromSelf)
})
type Claimed = typeof Claimed.Type

const ClaimRequest = Schema.Struct({ at: Schema.DateFromSelf, leasedUntil: Schema.DateFromSelf, limit: Schema.Number })

/**
 * Exponential backoff with jitter: `base × 2^(attempts−1)`, capped at 6 hours, then a random 50–100 % of it, so
 * receivers that failed together are not retried in lockstep. With the 5 s default: 5 s, 10 s, 20 s, … then every
 * 3–6 hours until the retry window (3 days) ends.
 */
export const retryDelayMs = (attempts: number, baseMs: number, random: number = Math.random()): number => {
  const ceiling = Math.min(MAX_RETRY_DELAY_MS, baseMs * 2 ** Math.min(attempts - 1, 30))
  return Math.round(ceiling * (0.5 + random / 2))
}

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
  const config = yield* AppConfig
  const targets = yield* WebhookTargets
  const signal = yield* WorkSignal
  const leaseMs = config.webhookTimeoutMs * 2 + 1000
  const windowMs = config.webhookRetryWindowSeconds * 1000

  /**
   * Due deliveries up to `limit`, within the caps: an endpoint's or an integration's due deliveries beyond what its
   * leases leave of its cap wait, so one partner's backlog cannot take every slot. Integrations take turns (each
   * one's earliest, then each one's next, …), so a backlog does not go first either. Only the first pending delivery
   * of a resource to an endpoint (`heads`) can go: its later events wait for it. Only due rows are read (the due
   * index), each checked against its resource's first pending one (one probe of the order index), and leases through
   * their own index: a backlog of retries not yet due costs nothing (100,000 of them: ~1 ms a claim, was 24-35 ms
   * when every pending row was read), with or without the table's statistics.
   */
  const claimWithinCaps = SqlSchema.findAll({
    Request: ClaimRequest,
    Result: Claimed,
    execute: ({ at, leasedUntil, limit }) =>
      sql`WITH busy_endpoints AS (
            SELECT endpoint_id, count(*) AS n FROM event_deliveries
            WHERE state = 'pending' AND leased_until > ${at} GROUP BY endpoint_id
          ), busy_integrations AS (
            SELECT w.integration_id, sum(b.n) AS n FROM busy_endpoints b JOIN webhook_endpoints w ON w.id = b.endpoint_id
            GROUP BY w.integration_id
          ), heads AS (
            SELECT c.seq, c.endpoint_id, c.next_attempt_at FROM event_deliveries c
            WHERE c.state = 'pending' AND c.next_attempt_at <= ${at} AND (c.leased_until IS NULL OR c.leased_until <= ${at})
              AND c.seq = (SELECT min(p.seq) FROM event_deliveries p
                           WHERE p.state = 'pending' AND p.endpoint_id = c.endpoint_id AND p.resource_id = c.resource_id)
          ), due AS (
            SELECT h.seq, h.next_attempt_at, w.integration_id,
                   COALESCE(be.n, 0) + row_number() OVER (PARTITION BY h.endpoint_id ORDER BY h.next_attempt_at, h.seq) AS endpoint_load
            FROM heads h
            JOIN webhook_endpoints w ON w.id = h.endpoint_id
            LEFT JOIN busy_endpoints be ON be.endpoint_id = h.endpoint_id
          ), within_endpoint_cap AS (
            SELECT d.seq, d.next_attempt_at,
                   row_number() OVER (PARTITION BY d.integration_id ORDER BY d.next_attempt_at, d.seq) AS turn,
                   COALESCE(bi.n, 0) AS integration_busy
            FROM due d LEFT JOIN busy_integrations bi ON bi.integration_id = d.integration_id
            WHERE d.endpoint_load <= ${DELIVERY_PER_ENDPOINT}
          ), picked AS (
            SELECT seq FROM within_endpoint_cap
            WHERE integration_busy + turn <= ${DELIVERY_PER_INTEGRATION}
            ORDER BY turn, next_attempt_at, seq
            LIMIT ${limit}
          )
          UPDATE event_deliveries d SET leased_until = ${leasedUntil}, attempts = d.attempts + 1
          FROM events e, webhook_endpoints w
          WHERE d.seq IN (
                  SELECT c.seq FROM event_deliveries c
                  WHERE c.seq IN (SELECT seq FROM picked)
                    AND c.state = 'pending' AND (c.leased_until IS NULL OR c.leased_until <= ${at})
                  FOR UPDATE SKIP LOCKED)
            AND e.id = d.event_id AND w.id = d.endpoint_id
          RETURNING d.seq::text AS seq, d.attempts, d.endpoint_id, e.id AS event_id, e.body, e.created_at AS event_created_at,
                    w.url, w.secret, w.previous_secret, w.previous_secret_expires_at`
  })

  const claim = (request: typeof ClaimRequest.Type) =>
    Effect.zipRight(sql`SELECT pg_advisory_xact_lock(hashtext(${CLAIM_LOCK}))`, claimWithinCaps(request)).pipe(sql.withTransaction)

  const recordAttempt = (delivery: Claimed, at: Date, durationMs: number, outcome: SendOutcome) =>
    sql`INSERT INTO event_delivery_attempts (event_id, endpoint_id, attempted_at, duration_ms, response_status, error, succeeded)
        VALUES (${delivery.event_id}, ${delivery.endpoint_id}, ${at}, ${durationMs}, ${outcome.status},
                ${outcome.ok ? null : outcome.error}, ${outcome.ok})`

  const succeeded = (delivery: Claimed, at: Date) =>
    Effect.zipRight(
      sql`UPDATE event_deliveries SET state = 'delivered', finished_at = ${at}, leased_until = NULL
          WHERE seq = ${delivery.seq} AND state = 'pending'`,
      sql`UPDATE webhook_endpoints SET failing_since = NULL WHERE id = ${delivery.endpoint_id} AND failing_since IS NOT NULL`
    )

  /** Retried until the window after the event closes; an endpoint failing for the whole window is disabled. */
  const failed = (delivery: Claimed, at: Date, error: string) =>
    Effect.gen(function*() {
      const giveUp = at.getTime() - delivery.event_created_at.getTime() >= windowMs
      const nextAt = new Date(at.getTime() + retryDelayMs(delivery.attempts, config.webhookRetryBaseMs))
      yield* giveUp
        ? sql`UPDATE event_deliveries SET state = 'failed', finished_at = ${at}, leased_until = NULL
              WHERE seq = ${delivery.seq} AND state = 'pending'`
        : sql`UPDATE event_deliveries SET next_attempt_at = ${nextAt}, leased_until = NULL
              WHERE seq = ${delivery.seq} AND state = 'pending'`
      const since = yield* sql<{ failing_since: Date }>`
        UPDATE webhook_endpoints SET failing_since = COALESCE(failing_since, ${at})
        WHERE id = ${delivery.endpoint_id} RETURNING failing_since`
      const failingSince = since[0]?.failing_since
      if (failingSince === undefined || at.getTime() - failingSince.getTime() < windowMs) return
      const days = Math.round((config.webhookRetryWindowSeconds / 86_400) * 10) / 10
      const reason = `disabled ${at.toISOString()}: every delivery failed for ${days} days (last: ${error})`
      yield* sql`UPDATE webhook_endpoints SET status = 'disabled', disabled_reason = ${reason}, updated_at = ${at}
                 WHERE id = ${delivery.endpoint_id} AND status = 'enabled'`
      yield* sql`UPDATE event_deliveries SET state = 'failed', finished_at = ${at}, leased_until = NULL
                 WHERE endpoint_id = ${delivery.endpoint_id} AND state = 'pending'`
      yield* Effect.logWarning("webhook endpoint disabled after failing for the whole retry window").pipe(
        Effect.annotateLogs({ endpointId: delivery.endpoint_id })
      )
    })

  const send = (delivery: Claimed) =>
    Effect.gen(function*() {
      const startedAt = yield* now
      const outcome: SendOutcome = yield* Either.match(targets.checkStatic(delivery.url), {
        onLeft: (reason) => Effect.succeed<SendOutcome>({ ok: false, status: null, error: `refused: url ${reason}` }),
        onRight: (url) =>
          postWebhook({
            url,
            body: delivery.body,
            timeoutMs: config.webhookTimeoutMs,
            lookup: targets.lookup,
            headers: signatureHeaders({
              eventId: delivery.event_id,
              timestampSeconds: Math.floor(startedAt.getTime() / 1000),
              body: delivery.body,
              secrets: secretsOf(delivery, startedAt)
            })
          })
      })
      const at = yield* now
      yield* Effect.zipRight(
        recordAttempt(delivery, startedAt, at.getTime() - startedAt.getTime(), outcome),
        outcome.ok ? succeeded(delivery, at) : failed(delivery, at, outcome.error)
      ).pipe(sql.withTransaction)
    })

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
    const due = yield* claim({ at, leasedUntil: new Date(at.getTime() + leaseMs), limit: room })
    yield* Ref.update(inFlight, (n) => n + due.length)
    for (const delivery of due) {
      yield* send(delivery).pipe(
        // Unrecorded (the database failed): the lease runs out and the delivery is claimed again.
        Effect.catchAllCause((cause) =>
          Effect.logWarning(`webhook delivery not recorded: ${String(Cause.squash(cause))}`.slice(0, 300)).pipe(
            Effect.annotateLogs({ eventId: delivery.event_id, endpointId: delivery.endpoint_id })
          )
        ),
        // A finished delivery frees a slot and may unblock the next event of its resource: look again now.
        Effect.ensuring(Effect.zipRight(Ref.update(inFlight, (n) => n - 1), signal.wake)),
        Effect.forkIn(scope)
      )
    }
    return { claimed: due.length, full: due.length === room }
  })

  /** When the earliest pending delivery can be claimed (its next attempt, or the end of its lease). */
  const nextDue = SqlSchema.single({
    Request: Schema.Void,
    Result: Schema.Struct({ next: Schema.NullOr(Schema.DateFromSelf) }),
    execute: () =>
      sql`SELECT min(GREATEST(next_attempt_at, COALESCE(leased_until, next_attempt_at))) AS next
          FROM event_deliveries WHERE state = 'pending'`
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
    const { next } = yield* Effect.orDie(nextDue(undefined))
    return yield* idleUntil(next)
  })

  return { runDue } as const
})
