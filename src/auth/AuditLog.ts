import {
  type AuditAction,
  type AuditActor,
  type AuditEntry,
  AuditActor as AuditActorSchema,
  AuditDetails,
  type AuditLogList,
  type BadRequest,
  IntegrationId,
  type KeyId,
  type ListAuditLogParams
} from "@cop-integrations/contracts"
import { Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { newInternalId } from "../base/ids.ts"
import { RequestOrigin } from "../base/RequestOrigin.ts"
import { ResponseHints } from "../base/ResponseHints.ts"
import { type KeysetRow, keysetPage, PageRequest } from "../db/Pagination.ts"

/** What a change records besides who, when and from where. `details` never holds a secret. */
export interface AuditRecord {
  readonly integrationId: string
  readonly action: AuditAction
  readonly targetId: string
  readonly details?: typeof AuditDetails.Type
  /** Who, when the request's key or session does not say it (a sign-in, the service itself); else from the request. */
  readonly actor?: AuditActor
}

const AuditRow = Schema.Struct({
  id: Schema.String,
  integration_id: IntegrationId,
  at: Schema.Date,
  action: Schema.String,
  actor: AuditActorSchema,
  target_id: Schema.String,
  address: Schema.NullOr(Schema.String),
  request_id: Schema.NullOr(Schema.String),
  details: AuditDetails
})
type AuditRow = typeof AuditRow.Type

const present = (row: AuditRow): AuditEntry => ({
  entryId: row.id,
  createdAt: row.at.toISOString(),
  action: row.action as AuditAction,
  actor: row.actor,
  targetId: row.target_id,
  address: row.address,
  requestId: row.request_id,
  details: row.details
})

/** The request's key or dashboard session as the actor; outside a request, the operator (the keys CLI). */
const actorOfRequest = (hints: Option.Option<typeof ResponseHints.Service>): AuditActor => {
  if (Option.isNone(hints) || hints.value.key === undefined) return { type: "operator" }
  const { dashboardSessionId, key } = hints.value
  const keyId = key.id as KeyId
  return dashboardSessionId === undefined
    ? { type: "api_key", keyId, last4: key.last4 }
    : { type: "dashboard_session", sessionId: dashboardSessionId, keyId }
}

/**
 * The audit log: every security-relevant change to an integration (keys, webhook endpoints, dashboard access), with
 * its actor, time, client address and request id. `record` writes on the caller's connection, so inside the change's
 * own transaction: a change is never without its entry, nor an entry without its change.
 */
export class AuditLog extends Context.Service<AuditLog>()("AuditLog", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const record = (entry: AuditRecord) =>
      Effect.gen(function*() {
        const origin = yield* RequestOrigin
        const actor = entry.actor ?? actorOfRequest(yield* Effect.serviceOption(ResponseHints))
        const fromRequest = actor.type === "api_key" || actor.type === "dashboard_session"
        yield* sql`INSERT INTO audit_log ${
          sql.insert({
            id: newInternalId("aud"),
            integration_id: entry.integrationId,
            action: entry.action,
            actor: JSON.stringify(actor),
            target_id: entry.targetId,
            address: fromRequest ? origin.address() : null,
            request_id: fromRequest ? origin.requestId : null,
            details: JSON.stringify(entry.details ?? {})
          })
        }`
      }).pipe(Effect.orDie)

    // Newest first: the cursor is the last row's (at, id), the next page the rows before it.
    const page = SqlSchema.findAll({
      Request: Schema.Struct({ ...PageRequest.fields, action: Schema.NullOr(Schema.String) }),
      Result: AuditRow,
      execute: (page) =>
        sql`SELECT * FROM audit_log
            WHERE integration_id = ${page.integrationId}
            ${page.createdFrom === null ? sql`` : sql`AND at >= ${page.createdFrom}`}
            ${page.createdTo === null ? sql`` : sql`AND at < ${page.createdTo}`}
            ${page.action === null ? sql`` : sql`AND action = ${page.action}`}
            ${page.after === null ? sql`` : sql`AND (at, id) < (${page.after.createdAt}, ${page.after.id})`}
            ORDER BY at DESC, id DESC
            LIMIT ${page.limit}`
    })

    const list = Effect.fn("AuditLog.list")(
      function*(
        integrationId: IntegrationId,
        query: ListAuditLogParams
      ): Effect.fn.Return<AuditLogList, BadRequest> {
        return yield* keysetPage<AuditRow & KeysetRow, AuditEntry, never, never>(
          {
            integrationId,
            createdFrom: query.createdFrom,
            createdTo: query.createdTo,
            limit: query.limit,
            cursor: query.cursor
          },
          (request) =>
            page({ ...request, action: query.action ?? null }).pipe(
              Effect.map((rows) => rows.map((row) => ({ ...row, created_at: row.at }))),
              Effect.orDie
            ),
          present
        )
      }
    )

    return { record, list } as const
  })
}) {
  static readonly Default = Layer.effect(this, this.make)
}
