import { SqlClient, SqlSchema } from "effect/sql"
import { EndpointRow } from "./EndpointRepo.ts"
import { EndpointId, EventId, WebhookSignatureScheme } from "@cop-integrations/contracts"
import { Context, Effect, Layer, Option, Schema } from "effect"
import type { SendOutcome } from "./Sender.ts"

/**
 * Claims take turns on this row of `replica_leases` (written by its migration), so each counts the leases the one before
 * it took (on any replica). A row lock, not an advisory one: the same through PgBouncer in transaction mode and on a
 * distributed PostgreSQL.
 */
const CLAIM_TURN = "deliveries:claim"

const Claimed = Schema.Struct({
  seq: Schema.String,
  attempts: Schema.Number,
  endpoint_id: EndpointId,
  event_id: EventId,
  event_type: Schema.String,
  body: Schema.String,
  /** The trace of the write that recorded the event (null: tracing was off); the delivery's span continues it. */
  traceparent: Schema.NullOr(Schema.String),
  event_created_at: Schema.Date,
  url: Schema.String,
  secret: Schema.RedactedFromValue(Schema.String),
  previous_secret: Schema.NullOr(Schema.RedactedFromValue(Schema.String)),
  previous_secret_expires_at: Schema.NullOr(Schema.Date),
  signature_scheme: WebhookSignatureScheme
})
export type Claimed = typeof Claimed.Type

const ClaimRequest = Schema.Struct({
  at: Schema.Date,
  leasedUntil: Schema.Date,
  limit: Schema.Number,
  /** Leases at once to one endpoint, and to the endpoints of one integration, over every replica. */
  perEndpoint: Schema.Number,
  perIntegration: Schema.Number
})

const Attempt = Schema.Struct({
  eventId: EventId,
  endpointId: EndpointId,
  at: Schema.Date,
  durationMs: Schema.Number,
  status: Schema.NullOr(Schema.Number),
  error: Schema.NullOr(Schema.String),
  succeeded: Schema.Boolean,
  responseExcerpt: Schema.NullOr(Schema.String)
})

const Finished = Schema.Struct({ seq: Schema.String, at: Schema.Date })
const EndpointAt = Schema.Struct({ endpointId: EndpointId, at: Schema.Date })

/**
 * The outbound deliveries of partner events (`event_deliveries`, their attempts, and the delivery state of
 * `webhook_endpoints`). Updates of a delivery apply only while it is `pending`.
 */
export class DeliveryRepo extends Context.Service<DeliveryRepo>()("DeliveryRepo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

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
      execute: ({ at, leasedUntil, limit, perEndpoint, perIntegration }) =>
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
            WHERE d.endpoint_load <= ${perEndpoint}
          ), picked AS (
            SELECT seq FROM within_endpoint_cap
            WHERE integration_busy + turn <= ${perIntegration}
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
          RETURNING d.seq::text AS seq, d.attempts, d.endpoint_id, e.id AS event_id, e.type AS event_type, e.body,
                    e.traceparent, e.created_at AS event_created_at,
                    w.url, w.secret, w.previous_secret, w.previous_secret_expires_at, w.signature_scheme`
    })

    const lockClaims = SqlSchema.findOne({
      Request: Schema.Void,
      Result: Schema.Struct({ name: Schema.String }),
      execute: () => sql`SELECT name FROM replica_leases WHERE name = ${CLAIM_TURN} FOR UPDATE`
    })

    const recordAttempt = SqlSchema.void({
      Request: Attempt,
      execute: ({ at, durationMs, endpointId, error, eventId, responseExcerpt, status, succeeded }) =>
        sql`INSERT INTO event_delivery_attempts
              (event_id, endpoint_id, attempted_at, duration_ms, response_status, error, succeeded, response_excerpt)
        VALUES (${eventId}, ${endpointId}, ${at}, ${durationMs}, ${status},
                ${error}, ${succeeded}, ${responseExcerpt})`
    })

    const markDelivered = SqlSchema.void({
      Request: Finished,
      execute: ({ at, seq }) =>
        sql`UPDATE event_deliveries SET state = 'delivered', finished_at = ${at}, leased_until = NULL
          WHERE seq = ${seq} AND state = 'pending'`
    })

    const clearFailing = SqlSchema.void({
      Request: EndpointId,
      execute: (endpointId) =>
        sql`UPDATE webhook_endpoints SET failing_since = NULL WHERE id = ${endpointId} AND failing_since IS NOT NULL`
    })

    const markFailed = SqlSchema.void({
      Request: Finished,
      execute: ({ at, seq }) =>
        sql`UPDATE event_deliveries SET state = 'failed', finished_at = ${at}, leased_until = NULL
              WHERE seq = ${seq} AND state = 'pending'`
    })

    const retryAt = SqlSchema.void({
      Request: Schema.Struct({ seq: Schema.String, nextAt: Schema.Date }),
      execute: ({ nextAt, seq }) =>
        sql`UPDATE event_deliveries SET next_attempt_at = ${nextAt}, leased_until = NULL
              WHERE seq = ${seq} AND state = 'pending'`
    })

    const markFailing = SqlSchema.findOneOption({
      Request: EndpointAt,
      Result: Schema.Struct({ failing_since: Schema.Date }),
      execute: ({ at, endpointId }) =>
        sql`
        UPDATE webhook_endpoints SET failing_since = COALESCE(failing_since, ${at})
        WHERE id = ${endpointId} RETURNING failing_since`
    })

    const firstFailureOf = SqlSchema.findOne({
      Request: Schema.Struct({ eventId: Schema.String, endpointId: Schema.String }),
      Result: Schema.Struct({ first_failed_at: Schema.Date }),
      execute: ({ endpointId, eventId }) =>
        sql`SELECT min(attempted_at + duration_ms * interval '1 millisecond') AS first_failed_at
              FROM event_delivery_attempts WHERE event_id = ${eventId} AND endpoint_id = ${endpointId}`
    })

    const disableEndpoint = SqlSchema.findOneOption({
      Request: Schema.Struct({ ...EndpointAt.fields, reason: Schema.String }),
      Result: EndpointRow,
      execute: ({ at, endpointId, reason }) =>
        sql`UPDATE webhook_endpoints SET status = 'disabled', disabled_reason = ${reason}, updated_at = ${at}
                 WHERE id = ${endpointId} AND status = 'enabled' RETURNING *`
    })

    const failPendingOf = SqlSchema.void({
      Request: EndpointAt,
      execute: ({ at, endpointId }) =>
        sql`UPDATE event_deliveries SET state = 'failed', finished_at = ${at}, leased_until = NULL
                 WHERE endpoint_id = ${endpointId} AND state = 'pending'`
    })

    /** When the earliest pending delivery can be claimed (its next attempt, or the end of its lease). */
    const nextDue = SqlSchema.findOne({
      Request: Schema.Void,
      Result: Schema.Struct({ next: Schema.NullOr(Schema.Date) }),
      execute: () =>
        sql`SELECT min(GREATEST(next_attempt_at, COALESCE(leased_until, next_attempt_at))) AS next
          FROM event_deliveries WHERE state = 'pending'`
    })

    /**
     * The outbox's backlog for the metrics: pending deliveries, and when the oldest one's event was recorded. Each reads
     * a partial index of the pending rows only, never a delivered or failed one: the count an index-only scan of the
     * due index (100,000 pending: 20 ms), the oldest the first entry of the pending rows' `created_at` index
     * (migration 0028: 0.06 ms).
     */
    const backlog = SqlSchema.findOne({
      Request: Schema.Void,
      Result: Schema.Struct({ pending: Schema.FiniteFromString, oldest: Schema.NullOr(Schema.Date) }),
      execute: () =>
        sql`SELECT (SELECT count(*) FROM event_deliveries WHERE state = 'pending')::text AS pending,
                   (SELECT min(created_at) FROM event_deliveries WHERE state = 'pending') AS oldest`
    })

    return {
      backlog: backlog(undefined).pipe(Effect.catchTags({ SchemaError: Effect.die, NoSuchElementError: Effect.die })),
      /** Leases due deliveries within the caps, in a transaction of its own that takes turns with other claims. */
      claim: (request: typeof ClaimRequest.Type) =>
        lockClaims(undefined).pipe(
          // Without the row there would be no turns at all: a schema out of step, not a claim to go on with.
          Effect.catchTag("NoSuchElementError", Effect.die),
          Effect.andThen(claimWithinCaps(request)),
          sql.withTransaction
        ),
      recordAttempt: (delivery: Claimed, at: Date, durationMs: number, outcome: SendOutcome) =>
        recordAttempt({
          eventId: delivery.event_id,
          endpointId: delivery.endpoint_id,
          at,
          durationMs,
          status: outcome.status,
          error: outcome.ok ? null : outcome.error,
          succeeded: outcome.ok,
          responseExcerpt: outcome.responseExcerpt
        }),
      /** The delivery is done, and its endpoint no longer failing. */
      succeeded: (delivery: Claimed, at: Date) =>
        Effect.andThen(markDelivered({ seq: delivery.seq, at }), clearFailing(delivery.endpoint_id)),
      /** The delivery is given up. */
      markFailed: (seq: string, at: Date) => markFailed({ seq, at }),
      retryAt: (seq: string, nextAt: Date) => retryAt({ seq, nextAt }),
      /** Since when the endpoint has been failing (now, if it was not). */
      markFailing: (endpointId: EndpointId, at: Date) =>
        markFailing({ endpointId, at }).pipe(Effect.map(Option.map((row) => row.failing_since))),
      /** When the delivery's first attempt ended (failed): the failing_since it would have set. */
      firstFailureOf: (delivery: Claimed) =>
        firstFailureOf({ eventId: delivery.event_id, endpointId: delivery.endpoint_id }).pipe(
          Effect.map((row) => row.first_failed_at)
        ),
      /** Disables the endpoint if it is enabled: the row as it now is, or none (it was disabled already). */
      disableEndpoint: (endpointId: EndpointId, reason: string, at: Date) =>
        disableEndpoint({ endpointId, reason, at }),
      /** Gives up every pending delivery to the endpoint. */
      failPendingOf: (endpointId: EndpointId, at: Date) => failPendingOf({ endpointId, at }),
      nextDue: nextDue(undefined).pipe(Effect.map(({ next }) => next))
    } as const
  })
}) {
  static readonly Default = Layer.effect(this, this.make)
}
