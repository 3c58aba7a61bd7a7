import {
  type BadRequest,
  type IntegrationId,
  type ListRequestLogsParams,
  NotFound,
  type RequestLog,
  type RequestLogList
} from "@cop-integrations/contracts"
import { Context, Effect, Layer, Option } from "effect"
import { PageBudget } from "../db/PageBudget.ts"
import { type KeysetRow, keysetPage, rowsFetched } from "../db/Pagination.ts"
import { RequestLogRepo, type RequestLogRow } from "./RequestLogRepo.ts"

const present = (row: RequestLogRow): RequestLog => ({
  requestId: row.request_id,
  createdAt: row.at.toISOString(),
  method: row.method,
  path: row.path,
  status: row.status,
  errorCode: row.error_code,
  error: row.error,
  durationMs: row.duration_ms,
  keyId: row.key_id,
  keyLast4: row.key_last4,
  dashboardSessionId: row.dashboard_session_id,
  clientAddress: row.client_address,
  request: { query: row.request_query, headers: row.request_headers, body: row.request_body },
  response: { body: row.response_body }
})

/** A row as a keyset page orders it: its (at, id) is the cursor's (createdAt, id). */
const keyset = (row: RequestLogRow): RequestLogRow & KeysetRow => ({ ...row, created_at: row.at })

/** An integration's request logs, as the contract answers them: newest first, with the list's filters. */
export class RequestLogs extends Context.Service<RequestLogs>()("RequestLogs", {
  make: Effect.gen(function*() {
    const repo = yield* RequestLogRepo
    const pageBudget = yield* PageBudget

    const list = Effect.fn("RequestLogs.list")(
      function*(
        integrationId: IntegrationId,
        query: ListRequestLogsParams
      ): Effect.fn.Return<RequestLogList, BadRequest> {
        const filters = {
          statusClass: query.statusClass,
          path: query.path,
          errorCode: query.errorCode,
          requestId: query.requestId,
          createdTo: query.createdTo === undefined ? undefined : new Date(query.createdTo)
        }
        return yield* keysetPage<RequestLogRow & KeysetRow, RequestLog, never, never>(
          { integrationId, createdFrom: query.createdFrom, limit: query.limit, cursor: query.cursor },
          (page) => Effect.map(repo.page(page, filters), (rows) => rows.map(keyset)),
          present
        ).pipe(pageBudget.withRows(rowsFetched(query.limit)))
      }
    )

    const get = Effect.fn("RequestLogs.get")(
      function*(integrationId: IntegrationId, requestId: string): Effect.fn.Return<RequestLog, NotFound> {
        const found = yield* repo.byRequestId(integrationId, requestId)
        if (Option.isNone(found)) return yield* Effect.fail(new NotFound({ error: "no request with this request id" }))
        return present(found.value)
      }
    )

    return { list, get } as const
  })
}) {
  static readonly Default = Layer.effect(this, this.make)
}
