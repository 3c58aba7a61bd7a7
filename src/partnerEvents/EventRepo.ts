import { SqlClient, SqlSchema } from "effect/sql"
import { EndpointId, EventId, EventType, IntegrationId } from "@cop-integrations/contracts"
import { Context, Effect, Layer, Schema } from "effect"
import { PageRequest } from "../db/Pagination.ts"

/** Events numbered per call of `position_events`; the rest wait for the next call (a reader's or the worker's). */
export const POSITION_BATCH = 5_000

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
  succeeded: Schema.Boolean,
  response_excerpt: Schema.NullOr(Schema.String)
})
export type AttemptRow = typeof AttemptRow.Type

/** An event as the list reads it: with its position (text: PostgreSQL's bigint). */
const ListedEventRow = Schema.Struct({ ...EventRow.fields, position: Schema.String })

/** Where a page starts: after a position, or after a (createdAt, id) of a cursor from before positions. */
const After = Schema.Union([
  Schema.TaggedStruct("Position", { position: Schema.String }),
  Schema.TaggedStruct("Keyset", { createdAt: Schema.Date, id: Schema.String })
])

const EventPage = Schema.Struct({
  integrationId: PageRequest.fields.integrationId,
  createdFrom: PageRequest.fields.createdFrom,
  limit: PageRequest.fields.limit,
  after: Schema.NullOr(After),
  type: Schema.NullOr(Schema.String),
  /** One resource's events only (its id as stored: a customer's address in lower case). */
  resourceId: Schema.optionalKey(Schema.NullOr(Schema.String))
})

const Owned = Schema.Struct({ integrationId: IntegrationId, eventId: EventId })

/** An integration's events (the outbox rows) and their delivery attempts; another integration's are not found. */
export class EventRepo extends Context.Service<EventRepo>()("EventRepo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /**
     * A keyset cursor from before positions resumes after the last event at or before its (createdAt, id) among those
     * the migration numbered (they have no insert_order), in that order; every event recorded since comes after them.
     */
    const positionAfter = (integrationId: string, after: typeof After.Encoded) =>
      after._tag === "Position" ? sql`${after.position}::bigint` : sql`COALESCE((
        SELECT position FROM events
        WHERE integration_id = ${integrationId} AND insert_order IS NULL AND position IS NOT NULL
          AND (created_at, id) <= (${after.createdAt}, ${after.id})
        ORDER BY created_at DESC, id DESC LIMIT 1), 0)`

    // Only events with a position are listed: numbered once committed, in the order they were recorded. One
    // resource's events are found through its (integration_id, resource_id, sequence) key: a few rows, then sorted.
    const page = SqlSchema.findAll({
      Request: EventPage,
      Result: ListedEventRow,
      execute: ({ after, createdFrom, integrationId, limit, resourceId, type }) =>
        sql`SELECT id, type, resource_id, body, created_at, position FROM events
            WHERE integration_id = ${integrationId}
            ${type === null ? sql`` : sql`AND type = ${type}`}
            ${resourceId === undefined || resourceId === null ? sql`` : sql`AND resource_id = ${resourceId}`}
            ${createdFrom === null ? sql`` : sql`AND created_at >= ${createdFrom}`}
            AND position > ${after === null ? sql`0` : positionAfter(integrationId, after)}
            ORDER BY position
            LIMIT ${limit}`
    })

    /**
     * Numbers the integration's committed events that have no position yet (at most POSITION_BATCH), after every
     * position already given: see migration 0021. Answers how many it numbered.
     */
    const positionPending = SqlSchema.findOne({
      Request: IntegrationId,
      Result: Schema.Struct({ numbered: Schema.Number }),
      execute: (integrationId) => sql`SELECT position_events(${integrationId}, ${POSITION_BATCH}) AS numbered`
    })

    /** The integrations with events waiting for a position. */
    const withPending = SqlSchema.findAll({
      Request: Schema.Void,
      Result: Schema.Struct({ integration_id: IntegrationId }),
      execute: () => sql`SELECT DISTINCT integration_id FROM events WHERE position IS NULL`
    })

    const findOwned = SqlSchema.findOneOption({
      Request: Owned,
      Result: EventRow,
      execute: ({ eventId, integrationId }) =>
        sql`SELECT id, type, resource_id, body, created_at FROM events WHERE id = ${eventId} AND integration_id = ${integrationId}`
    })

    const latestFor = SqlSchema.findOneOption({
      Request: Schema.Struct({ integrationId: IntegrationId, resourceId: Schema.String, type: EventType }),
      Result: EventRow,
      execute: ({ integrationId, resourceId, type }) =>
        sql`SELECT id, type, resource_id, body, created_at FROM events
            WHERE integration_id = ${integrationId} AND resource_id = ${resourceId} AND type = ${type}
            ORDER BY sequence DESC LIMIT 1`
    })

    const attempts = SqlSchema.findAll({
      Request: EventId,
      Result: AttemptRow,
      execute: (eventId) =>
        sql`SELECT endpoint_id, attempted_at, duration_ms, response_status, error, succeeded, response_excerpt
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
      /** The resource's latest event of `type` (the sandbox's trigger answers its id). */
      latestFor: (
        request: { readonly integrationId: IntegrationId; readonly resourceId: string; readonly type: EventType }
      ) => latestFor(request).pipe(Effect.orDie),
      positionPending: (integrationId: IntegrationId) =>
        positionPending(integrationId).pipe(Effect.orDie, Effect.map((row) => row.numbered)),
      /** Numbers the events of every integration that has some waiting (the worker's sweep). */
      positionAllPending: withPending(undefined).pipe(
        Effect.orDie,
        Effect.flatMap(
          Effect.forEach((row) => positionPending(row.integration_id).pipe(Effect.orDie), { discard: true })
        )
      ),
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
