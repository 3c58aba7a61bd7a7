import { IntegrationId, type StatusClass } from "@cop-integrations/contracts"
import { Context, Effect, Layer, Schema } from "effect"
import { SchemaJITCompiler } from "effect/schema"
import { SqlClient, SqlSchema } from "effect/sql"
import { PageRequest } from "../db/Pagination.ts"

/** One request as the recorder hands it over: every text already bounded and free of secrets (./Summary.ts). */
export interface RequestLogEntry {
  readonly id: string
  readonly integrationId: string
  readonly requestId: string
  readonly at: Date
  readonly method: string
  readonly path: string
  readonly status: number
  readonly errorCode: string | null
  readonly error: string | null
  readonly durationMs: number
  readonly keyId: string
  readonly keyLast4: string
  readonly dashboardSessionId: string | null
  readonly clientAddress: string
  readonly requestQuery: unknown
  readonly requestHeaders: unknown
  readonly requestBody: unknown
  readonly responseBody: unknown
}

export const RequestLogRow = Schema.Struct({
  id: Schema.String,
  integration_id: Schema.String,
  request_id: Schema.String,
  at: Schema.Date,
  method: Schema.String,
  path: Schema.String,
  status: Schema.Number,
  error_code: Schema.NullOr(Schema.String),
  error: Schema.NullOr(Schema.String),
  duration_ms: Schema.Number,
  key_id: Schema.String,
  key_last4: Schema.String,
  dashboard_session_id: Schema.NullOr(Schema.String),
  client_address: Schema.String,
  request_query: Schema.Json,
  request_headers: Schema.Json,
  request_body: Schema.NullOr(Schema.Json),
  response_body: Schema.NullOr(Schema.Json)
})
export type RequestLogRow = typeof RequestLogRow.Type

/** The filters of a list, besides the page. */
export interface RequestLogFilters {
  readonly statusClass: StatusClass | undefined
  readonly path: string | undefined
  readonly errorCode: string | undefined
  readonly requestId: string | undefined
  readonly createdTo: Date | undefined
}

const FilteredPage = Schema.Struct({
  ...PageRequest.fields,
  statusFrom: Schema.NullOr(Schema.Number),
  path: Schema.NullOr(Schema.String),
  errorCode: Schema.NullOr(Schema.String),
  requestId: Schema.NullOr(Schema.String),
  createdTo: Schema.NullOr(Schema.Date)
})

/** An entry as a row of the insert's JSON (a JSON null is SQL NULL there). */
const rowOf = (entry: RequestLogEntry) => ({
  id: entry.id,
  integration_id: entry.integrationId,
  request_id: entry.requestId,
  at: entry.at,
  method: entry.method,
  path: entry.path,
  status: entry.status,
  error_code: entry.errorCode,
  error: entry.error,
  duration_ms: entry.durationMs,
  key_id: entry.keyId,
  key_last4: entry.keyLast4,
  dashboard_session_id: entry.dashboardSessionId,
  client_address: entry.clientAddress,
  request_query: entry.requestQuery,
  request_headers: entry.requestHeaders,
  request_body: entry.requestBody ?? null,
  response_body: entry.responseBody ?? null
})

/** The integration's request logs; another integration's are never read. */
export class RequestLogRepo extends Context.Service<RequestLogRepo>()("RequestLogRepo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    SchemaJITCompiler.enable(RequestLogRow.ast)

    /**
     * Many rows in one statement, as one JSON parameter: the rows are serialised by JSON.stringify (native) rather than
     * as one escaped array per column, and the statement is the same whatever their number.
     */
    const insertMany = (entries: ReadonlyArray<RequestLogEntry>) =>
      sql`INSERT INTO request_logs (id, integration_id, request_id, at, method, path, status, error_code, error,
            duration_ms, key_id, key_last4, dashboard_session_id, client_address, request_query, request_headers,
            request_body, response_body)
          SELECT id, integration_id, request_id, at, method, path, status, error_code, error, duration_ms, key_id,
            key_last4, dashboard_session_id, client_address, request_query, request_headers, request_body, response_body
          FROM jsonb_to_recordset(${JSON.stringify(entries.map(rowOf))}::jsonb) AS r(id text, integration_id text,
            request_id text, at timestamptz, method text, path text, status smallint, error_code text, error text,
            duration_ms integer, key_id text, key_last4 text, dashboard_session_id text, client_address text,
            request_query jsonb,
            request_headers jsonb, request_body jsonb, response_body jsonb)`.pipe(Effect.asVoid)

    // Newest first: the cursor is the last row's (at, id), the next page the rows before it.
    const page = SqlSchema.findAll({
      Request: FilteredPage,
      Result: RequestLogRow,
      execute: (page) =>
        sql`SELECT * FROM request_logs
            WHERE integration_id = ${page.integrationId}
            ${page.createdFrom === null ? sql`` : sql`AND at >= ${page.createdFrom}`}
            ${page.createdTo === null ? sql`` : sql`AND at < ${page.createdTo}`}
            ${
          page.statusFrom === null ? sql`` : sql`AND status >= ${page.statusFrom} AND status < ${page.statusFrom + 100}`
        }
            ${page.path === null ? sql`` : sql`AND starts_with(path, ${page.path})`}
            ${page.errorCode === null ? sql`` : sql`AND error_code = ${page.errorCode}`}
            ${page.requestId === null ? sql`` : sql`AND request_id = ${page.requestId}`}
            ${page.after === null ? sql`` : sql`AND (at, id) < (${page.after.createdAt}, ${page.after.id})`}
            ORDER BY at DESC, id DESC
            LIMIT ${page.limit}`
    })

    const byRequestId = SqlSchema.findOneOption({
      Request: Schema.Struct({ integrationId: IntegrationId, requestId: Schema.String }),
      Result: RequestLogRow,
      execute: ({ integrationId, requestId }) =>
        sql`SELECT * FROM request_logs WHERE integration_id = ${integrationId} AND request_id = ${requestId}
            ORDER BY at DESC, id DESC LIMIT 1`
    })

    return {
      insertMany,
      page: (request: typeof PageRequest.Type, filters: RequestLogFilters) =>
        page({
          ...request,
          statusFrom: filters.statusClass === undefined ? null : Number(filters.statusClass[0]) * 100,
          path: filters.path ?? null,
          errorCode: filters.errorCode ?? null,
          requestId: filters.requestId ?? null,
          createdTo: filters.createdTo ?? null
        }).pipe(Effect.orDie),
      /** The integration's latest request with this id (a client may send one id more than once). */
      byRequestId: (integrationId: IntegrationId, requestId: string) =>
        byRequestId({ integrationId, requestId }).pipe(Effect.orDie)
    } as const
  })
}) {
  static readonly Default = Layer.effect(this, this.make)
}
