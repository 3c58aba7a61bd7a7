import {
  BadRequest,
  type EndpointId,
  type EventSubscription,
  type IntegrationId,
  MAX_REPLAY_EVENTS,
  NotFound,
  type ReplayRequest,
  type WebhookReplay
} from "@cop-integrations/contracts"
import { Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { now } from "../base/Clock.ts"
import { newInternalId } from "../base/ids.ts"
import { EndpointRepo } from "./EndpointRepo.ts"
import { WebhookEndpointDisabled } from "./WebhookEndpoints.ts"

const ReplayRow = Schema.Struct({
  id: Schema.String,
  endpoint_id: Schema.String,
  range_from: Schema.Date,
  range_to: Schema.Date,
  types: Schema.NullOr(Schema.Array(Schema.String)),
  events: Schema.Number,
  created_at: Schema.Date,
  delivered: Schema.Number,
  failed: Schema.Number,
  pending: Schema.Number
})
type ReplayRow = typeof ReplayRow.Type

const present = (row: ReplayRow): WebhookReplay => ({
  replayId: row.id,
  endpointId: row.endpoint_id as EndpointId,
  from: row.range_from.toISOString(),
  to: row.range_to.toISOString(),
  types: row.types as ReadonlyArray<EventSubscription> | null,
  status: row.pending > 0 ? "running" : "completed",
  events: row.events,
  delivered: row.delivered,
  failed: row.failed,
  pending: row.pending,
  createdAt: row.created_at.toISOString()
})

const notFound = (what: string) => new NotFound({ error: `no ${what}` })

/**
 * Replays: the events of a time range sent again to one endpoint, for a receiver back from an outage. The deliveries
 * are queued at once, in one transaction, in the order the events were recorded, marked with the replay; the worker
 * sends them as any other (signed, retried, in order per resource), and the replay's progress is their states.
 */
export class WebhookReplays extends Context.Service<WebhookReplays>()("WebhookReplays", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const endpoints = yield* EndpointRepo

    /** The events of the range the endpoint would be sent: its subscription, `types`, its own pings only. */
    const rangeOf = (
      integrationId: IntegrationId,
      endpointId: EndpointId,
      from: Date,
      to: Date,
      types: ReadonlyArray<string> | null
    ) =>
      sql`FROM events e JOIN webhook_endpoints w ON w.id = ${endpointId}
          WHERE e.integration_id = ${integrationId} AND e.created_at >= ${from} AND e.created_at < ${to}
            AND (w.events @> ARRAY['*']::text[] OR w.events @> ARRAY[e.type]::text[])
            AND (e.type <> 'endpoint.ping' OR e.resource_id = w.id)
            ${types === null ? sql`` : sql`AND e.type = ANY(${types}::text[])`}`

    const progress = SqlSchema.findOneOption({
      Request: Schema.Struct({ integrationId: Schema.String, endpointId: Schema.String, replayId: Schema.String }),
      Result: ReplayRow,
      execute: ({ endpointId, integrationId, replayId }) =>
        sql`SELECT r.id, r.endpoint_id, r.range_from, r.range_to, r.types, r.events, r.created_at,
                   count(*) FILTER (WHERE d.state = 'delivered')::int AS delivered,
                   count(*) FILTER (WHERE d.state IN ('failed', 'canceled'))::int AS failed,
                   count(*) FILTER (WHERE d.state = 'pending')::int AS pending
            FROM webhook_replays r LEFT JOIN event_deliveries d ON d.replay_id = r.id
            WHERE r.id = ${replayId} AND r.integration_id = ${integrationId} AND r.endpoint_id = ${endpointId}
            GROUP BY r.id`
    })

    const start = Effect.fn("WebhookReplays.start")(
      function*(integrationId: IntegrationId, endpointId: EndpointId, request: ReplayRequest) {
        const from = new Date(request.from)
        const to = new Date(request.to)
        if (to.getTime() <= from.getTime()) {
          return yield* Effect.fail(new BadRequest({ error: "to: must be later than from" }))
        }
        const types = request.types === undefined || request.types.includes("*") ? null : [...new Set(request.types)]
        const at = yield* now
        const replayId = newInternalId("rp")
        const queued = yield* Effect.gen(function*() {
          const endpoint = yield* endpoints.findOwned(integrationId, endpointId)
          if (Option.isNone(endpoint)) return yield* Effect.fail(notFound(`webhook endpoint ${endpointId}`))
          if (endpoint.value.status === "disabled") {
            return yield* Effect.fail(
              new WebhookEndpointDisabled({ endpointId, reason: endpoint.value.disabled_reason })
            )
          }
          const [counted] = yield* sql<{ readonly n: number }>`SELECT count(*)::int AS n ${
            rangeOf(integrationId, endpointId, from, to, types)
          }`
          const events = counted?.n ?? 0
          if (events > MAX_REPLAY_EVENTS) {
            return yield* Effect.fail(
              new BadRequest({
                error:
                  `to: the range holds ${events} events, more than the ${MAX_REPLAY_EVENTS} a replay sends: replay it in parts`
              })
            )
          }
          yield* sql`INSERT INTO webhook_replays ${
            sql.insert({
              id: replayId,
              integration_id: integrationId,
              endpoint_id: endpointId,
              range_from: from,
              range_to: to,
              events,
              created_at: at
            })
          }`
          if (types !== null) yield* sql`UPDATE webhook_replays SET types = ${types}::text[] WHERE id = ${replayId}`
          // in the order the events were recorded: each resource's deliveries queue in its sequence
          yield* sql`INSERT INTO event_deliveries (event_id, endpoint_id, resource_id, state, next_attempt_at, created_at,
                                                   replay_id)
                     SELECT e.id, ${endpointId}, e.resource_id, 'pending', ${at}, ${at}, ${replayId}
                     ${rangeOf(integrationId, endpointId, from, to, types)}
                     ORDER BY e.position NULLS LAST, e.insert_order, e.id`
          return events
        }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))
        yield* Effect.logInfo(`webhook replay queued: ${queued} events`).pipe(
          Effect.annotateLogs({ endpointId, replayId })
        )
        return yield* get(integrationId, endpointId, replayId)
      }
    )

    const get = Effect.fn("WebhookReplays.get")(
      function*(integrationId: IntegrationId, endpointId: EndpointId, replayId: string) {
        const row = yield* progress({ integrationId, endpointId, replayId }).pipe(Effect.orDie)
        return yield* Option.match(row, {
          onNone: () => Effect.fail(notFound(`replay ${replayId} of webhook endpoint ${endpointId}`)),
          onSome: (found) => Effect.succeed(present(found))
        })
      }
    )

    return { start, get } as const
  })
}) {
  static readonly Default = Layer.effect(this, this.make)
}
