import type { EndpointId, EventType, IntegrationId } from "@cop-integrations/contracts"
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { currentTraceparent } from "../base/Tracing.ts"
import { newEventId } from "./EventIds.ts"

export interface NewEvent {
  readonly integrationId: IntegrationId
  readonly type: EventType
  /** The resource the event is about (payout, customer, swap or endpoint id): deliveries keep its order. */
  readonly resourceId: string
  /** The resource as the API returns it at this moment. */
  readonly object: unknown
  /** `JSON.stringify(object)`, when the caller has it already (the body then embeds it instead of serialising again). */
  readonly objectJson?: string
  readonly at: Date
}

/**
 * The outbox: an event is written in the transaction of the state change it reports (callers run inside it), with
 * one pending delivery per enabled endpoint subscribed to its type, in one statement (so the pair is atomic on its
 * own too). The body is stored as sent, so every delivery and redelivery is the same bytes.
 *
 * `sequence` is the resource's next number (1, 2, 3, … per resource), taken in that same statement from the
 * resource's counter row (`event_sequences`) by an upsert: it locks the row until the transaction ends, so two
 * transactions recording for one resource take turns whatever locks their callers hold (a ping holds none), and a
 * rolled-back one leaves no gap. `max(sequence) + 1` would need every caller to hold the resource's row lock first.
 *
 * The event keeps the `traceparent` of the span that recorded it (null while tracing is off): its deliveries, sent
 * later by the worker in another fiber, continue that trace (partnerEvents/Delivery.ts).
 */
export class Outbox extends Context.Service<Outbox>()("Outbox", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /**
     * Two CTEs, `counter` and `event` (the row, `RETURNING id, body`): the event numbered, its body `head` + the
     * sequence + `tail`, so the database writes the body with the number it took. JSON.stringify composes: the
     * object's own JSON spliced in is the same bytes as serialising it in place.
     */
    const numberedEvent = (event: NewEvent, traceparent: string | null) => {
      const id = newEventId(event.at.getTime())
      const head = `{"id":${JSON.stringify(id)},"type":${JSON.stringify(event.type)},"createdAt":${
        JSON.stringify(event.at.toISOString())
      },"sequence":`
      const tail = `,"data":{"object":${event.objectJson ?? JSON.stringify(event.object)}}}`
      return sql`
        counter AS (
          INSERT INTO event_sequences (integration_id, resource_id, last_sequence)
          VALUES (${event.integrationId}, ${event.resourceId}, 1)
          ON CONFLICT (integration_id, resource_id) DO UPDATE SET last_sequence = event_sequences.last_sequence + 1
          RETURNING last_sequence),
        event AS (
          INSERT INTO events (id, integration_id, type, resource_id, sequence, body, created_at, traceparent)
          SELECT ${id}, ${event.integrationId}, ${event.type}, ${event.resourceId}, last_sequence,
                 ${head}::text || last_sequence::text || ${tail}::text, ${event.at}, ${traceparent}
          FROM counter
          RETURNING id, body)`
    }

    const record = (event: NewEvent) =>
      Effect.flatMap(currentTraceparent, (traceparent) =>
        sql`
        WITH ${numberedEvent(event, traceparent)}
        INSERT INTO event_deliveries (event_id, endpoint_id, resource_id, state, next_attempt_at, created_at)
        SELECT event.id, w.id, ${event.resourceId}, 'pending', ${event.at}, ${event.at} FROM event, webhook_endpoints w
        WHERE w.integration_id = ${event.integrationId} AND w.deleted_at IS NULL AND w.status = 'enabled'
          AND (w.events @> ARRAY['*']::text[] OR w.events @> ARRAY[${event.type}]::text[])
        ORDER BY w.id`).pipe(Effect.asVoid, Effect.orDie)

    /** An event for one endpoint only, whatever it subscribes to (`endpoint.ping`); its body, for the answer. */
    const recordFor = (endpointId: EndpointId, event: NewEvent) =>
      Effect.flatMap(currentTraceparent, (traceparent) =>
        sql<{ readonly body: string }>`
        WITH ${numberedEvent(event, traceparent)},
        delivery AS (
          INSERT INTO event_deliveries (event_id, endpoint_id, resource_id, state, next_attempt_at, created_at)
          SELECT event.id, ${endpointId}, ${event.resourceId}, 'pending', ${event.at}, ${event.at} FROM event)
        SELECT body FROM event`).pipe(
          Effect.map((rows) => rows[0]!.body),
          Effect.orDie
        )

    return { record, recordFor } as const
  })
}) {
  static readonly Default = Layer.effect(this, this.make)
}
