import type { EndpointId, EventType, IntegrationId } from "@cop-integrations/contracts"
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
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
 */
export class Outbox extends Context.Service<Outbox>()("Outbox", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const stored = (event: NewEvent) => {
      const id = newEventId(event.at.getTime())
      // JSON.stringify composes: the object's own JSON spliced in is the same bytes as serialising it in place.
      const body = event.objectJson === undefined
        ? JSON.stringify({ id, type: event.type, createdAt: event.at.toISOString(), data: { object: event.object } })
        : `{"id":${JSON.stringify(id)},"type":${JSON.stringify(event.type)},"createdAt":${
          JSON.stringify(event.at.toISOString())
        },"data":{"object":${event.objectJson}}}`
      return { id, body }
    }

    const insertEvent = (event: NewEvent) => {
      const { body, id } = stored(event)
      return sql`INSERT INTO events (id, integration_id, type, resource_id, body, created_at)
                 VALUES (${id}, ${event.integrationId}, ${event.type}, ${event.resourceId}, ${body}, ${event.at})`.pipe(
        Effect.as({ id, body })
      )
    }

    const record = (event: NewEvent) => {
      const { body, id } = stored(event)
      return sql`
        WITH event AS (
          INSERT INTO events (id, integration_id, type, resource_id, body, created_at)
          VALUES (${id}, ${event.integrationId}, ${event.type}, ${event.resourceId}, ${body}, ${event.at}))
        INSERT INTO event_deliveries (event_id, endpoint_id, resource_id, state, next_attempt_at, created_at)
        SELECT ${id}, w.id, ${event.resourceId}, 'pending', ${event.at}, ${event.at} FROM webhook_endpoints w
        WHERE w.integration_id = ${event.integrationId} AND w.deleted_at IS NULL AND w.status = 'enabled'
          AND (w.events @> ARRAY['*']::text[] OR w.events @> ARRAY[${event.type}]::text[])
        ORDER BY w.id`.pipe(Effect.as(id), Effect.orDie)
    }

    /** An event for one endpoint only, whatever it subscribes to (`endpoint.ping`); its body, for the answer. */
    const recordFor = (endpointId: EndpointId, event: NewEvent) =>
      Effect.gen(function*() {
        const inserted = yield* insertEvent(event)
        yield* sql`
          INSERT INTO event_deliveries (event_id, endpoint_id, resource_id, state, next_attempt_at, created_at)
          VALUES (${inserted.id}, ${endpointId}, ${event.resourceId}, 'pending', ${event.at}, ${event.at})`
        return inserted.body
      }).pipe(sql.withTransaction, Effect.orDie)

    return { record, recordFor } as const
  })
}) {
  static readonly Default = Layer.effect(this, this.make)
}
