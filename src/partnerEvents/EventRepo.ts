import { SqlClient, SqlSchema } from "effect/sql"
import { EndpointId, EventId, EventType, IntegrationId } from "@cop-integrations/contracts"
import { Context, Effect, Layer, Schema } from "effect"
import { PageRequest } from "../db/Pagination.ts"

export const EventRow = Schema.Struct({
  id: EventId,
  type: EventType,
  resource_id: Schema.String,
  body: Schema.String,
  created_at: Schema.Date
})
export type EventRow = typeof EventRow.Type

export const AttemptRow = Schema.Struct({
  endpoint_id: EndpointId,
  attempted_at: Schema.Date,
  duration_ms: Schema.Number,
  response_status: Schema.NullOr(Schema.Number),
  error: Schema.NullOr(Schema.String),
  succeeded: Schema.Boolean
})
export type AttemptRow = typeof AttemptRow.Type

const EventPage = Schema.Struct({ ...PageRequest.fields, type: Schema.NullOr(Schema.String) })

const Owned = Schema.Struct({ integrationId: IntegrationId, eventId: EventId })

/** An integration's events (the outbox rows) and their delivery attempts; another integration's are not found. */
export class EventRepo extends Context.Service<EventRepo>()("EventRepo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const page = SqlSchema.findAll({
      Request: EventPage,
      Result: EventRow,
      execute: ({ after, createdFrom, integrationId, limit, type }) =>
        sql`SELECT id, type, resource_id, body, created_at FROM events
            WHERE integration_id = ${integrationId}
            ${type === null ? sql`` : sql`AND type = ${type}`}
            ${createdFrom === null ? sql`` : sql`AND created_at >= ${createdFrom}`}
            ${after === null ? sql`` : sql`AND (created_at, id) > (${after.createdAt}, ${after.id})`}
            ORDER BY created_at, id
            LIMIT ${limit}`
    })

    const findOwned = SqlSchema.findOneOption({
      Request: Owned,
      Result: EventRow,
      execute: ({ eventId, integrationId }) =>
        sql`SELECT id, type, resource_id, body, created_at FROM events WHERE id = ${eventId} AND integration_id = ${integrationId}`
    })

    const attempts = SqlSchema.findAll({
      Request: EventId,
      Result: AttemptRow,
      execute: (eventId) =>
        sql`SELECT endpoint_id, attempted_at, duration_ms, response_status, error, succeeded
            FROM event_delivery_attempts WHERE event_id = ${eventId} ORDER BY id`
    })

    /**
     * New pending deliveries of an event: to every enabled endpoint subscribed to its type, or, for a ping, to the
     * endpoint it pinged. Earlier deliveries keep their attempts; the new ones queue behind the resource's others.
     */
    const redeliver = SqlSchema.findAll({
      Request: Schema.Struct({ ...Owned.fields, at: Schema.Date }),
      Result: Schema.Struct({ endpoint_id: EndpointId }),
      execute: ({ at, eventId, integrationId }) =>
        sql`INSERT INTO event_deliveries (event_id, endpoint_id, resource_id, state, next_attempt_at, created_at)
            SELECT e.id, w.id, e.resource_id, 'pending', ${at}, ${at}
            FROM events e JOIN webhook_endpoints w ON w.integration_id = e.integration_id
            WHERE e.id = ${eventId} AND e.integration_id = ${integrationId}
              AND w.deleted_at IS NULL AND w.status = 'enabled'
              AND CASE WHEN e.type = 'endpoint.ping' THEN w.id = e.resource_id
                       ELSE w.events @> ARRAY['*']::text[] OR w.events @> ARRAY[e.type]::text[] END
            ORDER BY w.id
            RETURNING endpoint_id`
    })

    return {
      page: (request: typeof EventPage.Type) => page(request).pipe(Effect.orDie),
      findOwned: (integrationId: IntegrationId, eventId: EventId) =>
        findOwned({ integrationId, eventId }).pipe(Effect.orDie),
      attempts: (eventId: EventId) => attempts(eventId).pipe(Effect.orDie),
      redeliver: (integrationId: IntegrationId, eventId: EventId, at: Date) =>
        redeliver({ integrationId, eventId, at }).pipe(
          Effect.orDie,
          Effect.map((rows) => rows.map((row) => row.endpoint_id))
        )
    } as const
  })
}) {
  static readonly Default = Layer.effect(this, this.make)
}
