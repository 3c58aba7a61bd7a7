import { SqlClient, SqlSchema } from "effect/sql"
import {
  EndpointId,
  EventSubscription,
  IntegrationId,
  WebhookEndpointStatus,
  WebhookSignatureScheme
} from "@cop-integrations/contracts"
import { Context, Effect, Layer, Option, Schema } from "effect"

export const EndpointRow = Schema.Struct({
  id: EndpointId,
  integration_id: IntegrationId,
  url: Schema.String,
  events: Schema.Array(EventSubscription),
  secret: Schema.RedactedFromValue(Schema.String),
  previous_secret: Schema.NullOr(Schema.RedactedFromValue(Schema.String)),
  previous_secret_expires_at: Schema.NullOr(Schema.Date),
  status: WebhookEndpointStatus,
  signature_scheme: WebhookSignatureScheme,
  disabled_reason: Schema.NullOr(Schema.String),
  created_at: Schema.Date,
  updated_at: Schema.Date
})
export type EndpointRow = typeof EndpointRow.Type

const COLUMNS =
  "id, integration_id, url, events, secret, previous_secret, previous_secret_expires_at, status, signature_scheme, disabled_reason, created_at, updated_at"

const Owned = Schema.Struct({ integrationId: IntegrationId, endpointId: EndpointId })

/** What an update sets (what it leaves out stays), and the reason recorded when it disables the endpoint. */
export interface EndpointChange {
  readonly status?: typeof WebhookEndpointStatus.Type
  readonly url?: string
  readonly events?: ReadonlyArray<EventSubscription>
  readonly signatureScheme?: WebhookSignatureScheme
  readonly disabledReason?: string
}

/** Webhook endpoints of an integration; a deleted one is kept (its deliveries reference it) but never found. */
export class EndpointRepo extends Context.Service<EndpointRepo>()("EndpointRepo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const columns = sql.literal(COLUMNS)

    /** Inserts unless the integration already has `max` endpoints (none: it has). */
    const insertBelow = SqlSchema.findOneOption({
      Request: Schema.Struct({ row: EndpointRow, max: Schema.Number }),
      Result: EndpointRow,
      execute: ({ max, row }) =>
        sql`INSERT INTO webhook_endpoints (id, integration_id, url, events, secret, status, signature_scheme, created_at,
                                           updated_at)
            SELECT ${row.id}, ${row.integration_id}, ${row.url}, string_to_array(${
          row.events.join(",")
        }, ','), ${row.secret},
                   ${row.status}, ${row.signature_scheme}, ${row.created_at}, ${row.updated_at}
            WHERE (SELECT count(*) FROM webhook_endpoints
                   WHERE integration_id = ${row.integration_id} AND deleted_at IS NULL) < ${max}
            RETURNING ${columns}`
    })

    /**
     * The count and the insert as one step: the integration's row, locked first, makes its creates take turns, and
     * the count (a later statement, so it sees what the one before committed) cannot be overtaken. FOR NO KEY UPDATE
     * leaves the foreign-key checks of other tables' inserts free.
     */
    const insertWithinCap = (row: EndpointRow, max: number) =>
      Effect.andThen(
        sql`SELECT 1 FROM integrations WHERE id = ${row.integration_id} FOR NO KEY UPDATE`,
        insertBelow({ row, max })
      ).pipe(sql.withTransaction)

    const list = SqlSchema.findAll({
      Request: IntegrationId,
      Result: EndpointRow,
      execute: (integrationId) =>
        sql`SELECT ${columns} FROM webhook_endpoints WHERE integration_id = ${integrationId} AND deleted_at IS NULL
            ORDER BY created_at, id`
    })

    const findOwned = SqlSchema.findOneOption({
      Request: Owned,
      Result: EndpointRow,
      execute: ({ endpointId, integrationId }) =>
        sql`SELECT ${columns} FROM webhook_endpoints
            WHERE id = ${endpointId} AND integration_id = ${integrationId} AND deleted_at IS NULL`
    })

    const rotate = SqlSchema.findOneOption({
      Request: Schema.Struct({
        ...Owned.fields,
        secret: Schema.RedactedFromValue(Schema.String),
        at: Schema.Date,
        overlapUntil: Schema.Date
      }),
      Result: EndpointRow,
      execute: ({ at, endpointId, integrationId, overlapUntil, secret }) =>
        sql`UPDATE webhook_endpoints SET previous_secret = secret, previous_secret_expires_at = ${overlapUntil},
                   secret = ${secret}, updated_at = ${at}
            WHERE id = ${endpointId} AND integration_id = ${integrationId} AND deleted_at IS NULL
            RETURNING ${columns}`
    })

    /**
     * Sets what `change` names, in one transaction. Disabling records `disabledReason` (unless it was disabled
     * already: the first reason stays) and cancels the endpoint's pending deliveries, as a deletion does, so nothing
     * more is sent to it; enabling a disabled endpoint clears its reason and its failure record (`failing_since`), so
     * the retry window starts again from its next failure. `updated_at` moves only when something changed. None when
     * it is not the integration's (or deleted).
     */
    const update = (integrationId: IntegrationId, endpointId: EndpointId, change: EndpointChange, at: Date) =>
      Effect.gen(function*() {
        const url = change.url === undefined ? sql`url` : sql`${change.url}`
        const events = change.events === undefined
          ? sql`events`
          : sql`string_to_array(${change.events.join(",")}, ',')`
        const status = change.status === undefined ? sql`status` : sql`${change.status}`
        const scheme = change.signatureScheme === undefined ? sql`signature_scheme` : sql`${change.signatureScheme}`
        const rows = yield* sql`
          UPDATE webhook_endpoints SET
            url = ${url},
            events = ${events},
            status = ${status},
            signature_scheme = ${scheme},
            disabled_reason = CASE WHEN ${status} = 'enabled' THEN NULL
                                   WHEN status = 'enabled' THEN ${change.disabledReason ?? null}
                                   ELSE disabled_reason END,
            failing_since = CASE WHEN status = 'disabled' AND ${status} = 'enabled' THEN NULL ELSE failing_since END,
            updated_at = CASE WHEN (url, events, status, signature_scheme) IS DISTINCT FROM
                                   (${url}, ${events}, ${status}, ${scheme}) THEN ${at}
                              ELSE updated_at END
          WHERE id = ${endpointId} AND integration_id = ${integrationId} AND deleted_at IS NULL
          RETURNING ${columns}`
        if (rows.length === 0) return Option.none<EndpointRow>()
        if (change.status === "disabled") {
          yield* sql`UPDATE event_deliveries SET state = 'canceled', finished_at = ${at}, leased_until = NULL
                     WHERE endpoint_id = ${endpointId} AND state = 'pending'`
        }
        return Option.some(yield* Schema.decodeUnknownEffect(EndpointRow)(rows[0]))
      }).pipe(sql.withTransaction)

    /** Deletes (softly) and drops the deliveries still pending for it, in one transaction. */
    const remove = (integrationId: IntegrationId, endpointId: EndpointId, at: Date) =>
      Effect.gen(function*() {
        const rows = yield* sql`UPDATE webhook_endpoints SET deleted_at = ${at}, updated_at = ${at}
                                WHERE id = ${endpointId} AND integration_id = ${integrationId} AND deleted_at IS NULL
                                RETURNING id`
        if (rows.length === 0) return false
        yield* sql`UPDATE event_deliveries SET state = 'canceled', finished_at = ${at}, leased_until = NULL
                   WHERE endpoint_id = ${endpointId} AND state = 'pending'`
        return true
      }).pipe(sql.withTransaction)

    return {
      /** The new endpoint, or none when the integration already has `max`. */
      insertWithinCap: (row: EndpointRow, max: number): Effect.Effect<Option.Option<EndpointRow>> =>
        insertWithinCap(row, max).pipe(Effect.orDie),
      list: (integrationId: IntegrationId) => list(integrationId).pipe(Effect.orDie),
      findOwned: (integrationId: IntegrationId, endpointId: EndpointId): Effect.Effect<Option.Option<EndpointRow>> =>
        findOwned({ integrationId, endpointId }).pipe(Effect.orDie),
      rotate: (input: typeof rotate extends (i: infer I) => unknown ? I : never) => rotate(input).pipe(Effect.orDie),
      /** The endpoint as changed, or none when it is not the integration's. */
      update: (
        integrationId: IntegrationId,
        endpointId: EndpointId,
        change: EndpointChange,
        at: Date
      ): Effect.Effect<Option.Option<EndpointRow>> => update(integrationId, endpointId, change, at).pipe(Effect.orDie),
      remove: (integrationId: IntegrationId, endpointId: EndpointId, at: Date) =>
        remove(integrationId, endpointId, at).pipe(Effect.orDie)
    } as const
  })
}) {
  static readonly Default = Layer.effect(this, this.make)
}
