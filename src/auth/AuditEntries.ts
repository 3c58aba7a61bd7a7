import {
  type AuditAction,
  type AuditEntry,
  AuditActor,
  AuditDetails,
  type AuditLogList,
  type BadRequest,
  IntegrationId,
  type ListAuditLogParams
} from "@cop-integrations/contracts"
import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { PageBudget } from "../db/PageBudget.ts"
import { type KeysetRow, keysetPage, PageRequest, rowsFetched } from "../db/Pagination.ts"

const AuditRow = Schema.Struct({
  id: Schema.String,
  integration_id: IntegrationId,
  at: Schema.Date,
  action: Schema.String,
  actor: AuditActor,
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

/** An integration's audit log as the contract lists it: newest first, filtered, a page held to the page budget. */
export class AuditEntries extends Context.Service<AuditEntries>()("AuditEntries", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const pageBudget = yield* PageBudget

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

    const list = Effect.fn("AuditEntries.list")(
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
        ).pipe(pageBudget.withRows(rowsFetched(query.limit)))
      }
    )

    return { list } as const
  })
}) {
  static readonly Default = Layer.effect(this, this.make)
}
