import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { Authentication } from "./Auth.ts"
import { groupErrors } from "./Breb.ts"
import { NotFoundError } from "./Errors.ts"
import { IntegrationId } from "./Ids.ts"
import { ListCursor, ListLimit } from "./Payout.ts"
import { atLeast, atMost, IsoTimestamp, matching, PrintableText } from "./Primitives.ts"

/** A safe integer, documented as the named `Int` component (plain `integer`). */
const Int = Schema.Number.check(Schema.isInt({ identifier: "Int", toJsonSchema: () => ({ type: "integer" }) }))

/** What a request log keeps of a JSON body, a query or headers: a bounded copy with every secret taken out. */
export const RequestLogSummary = Schema.Json.annotate({
  identifier: "RequestLogSummary",
  description:
    "A bounded copy of the JSON: at most a few levels deep and a few items per array, strings cut at 64 characters, and only the values of fields known to hold no secret; any other value reads `[redacted]`. API keys, webhook secrets and OTP codes are never kept; a Bre-B key is masked (`****2024`), an e-mail too (`m***@example.com`), a URL is reduced to its origin."
})

export const RequestLog = Schema.Struct({
  requestId: Schema.String.annotate({
    description: "The request's `X-Request-Id` (the one it sent when safe to keep, else the one the service gave it)"
  }),
  createdAt: IsoTimestamp.annotate({ description: "When the request arrived" }),
  method: Schema.String,
  path: Schema.String.annotate({
    description: "The path without the query; a segment that looks like a secret reads `[redacted]`"
  }),
  status: Int.annotate({ description: "The HTTP status answered" }),
  errorCode: Schema.NullOr(Schema.String).annotate({ description: "The answer's `errorCode`, if any" }),
  error: Schema.NullOr(Schema.String).annotate({
    description: "4xx and 5xx: the answer's `error` message, without the values it quoted from the request"
  }),
  durationMs: Int,
  keyId: Schema.String.annotate({ description: "The API key the request was made with" }),
  keyLast4: Schema.String.annotate({ description: "The last 4 characters of that key" }),
  dashboardSessionId: Schema.NullOr(Schema.String).annotate({
    description:
      "The dashboard session the request was made with (its `sessionId`), null for a request made with the key itself; a session's requests name the key that made the session"
  }),
  clientAddress: Schema.String.annotate({
    description: "The client's address (through the deployment's trusted proxies)"
  }),
  request: Schema.Struct({
    query: RequestLogSummary,
    headers: RequestLogSummary.annotate({
      description:
        "`content-type`, `idempotency-key`, `user-agent` and `x-mock-scenario` only: never `Authorization`, a cookie or any other header"
    }),
    body: Schema.NullOr(RequestLogSummary)
  }),
  response: Schema.Struct({
    body: Schema.NullOr(RequestLogSummary)
  })
}).annotate({
  identifier: "RequestLog",
  description: "One authenticated request this integration made, as the service recorded it (kept 7 days by default)"
})
export type RequestLog = typeof RequestLog.Type

export const RequestLogList = Schema.Struct({
  integrationId: IntegrationId,
  items: Schema.Array(RequestLog),
  nextCursor: Schema.NullOr(Schema.String)
}).annotate({ identifier: "RequestLogList" })
export type RequestLogList = typeof RequestLogList.Type

export const StatusClass = Schema.Literals(["2xx", "3xx", "4xx", "5xx"]).annotate({
  description: "Only requests answered with a status of this class"
})
export type StatusClass = typeof StatusClass.Type

export const ListRequestLogsParams = Schema.Struct({
  statusClass: Schema.optionalKey(StatusClass),
  path: Schema.optionalKey(
    PrintableText.check(atLeast(1, "must not be empty"), atMost(256), matching(/^\//, "must start with /")).annotate({
      description: "Only requests whose path starts with this (`/api/integrations/breb/payouts`)"
    })
  ),
  errorCode: Schema.optionalKey(
    PrintableText.check(atLeast(1, "must not be empty"), atMost(64)).annotate({
      description: "Only requests answered with this `errorCode`"
    })
  ),
  requestId: Schema.optionalKey(
    PrintableText.check(atLeast(1, "must not be empty"), atMost(64)).annotate({
      description: "Only requests with this `X-Request-Id`"
    })
  ),
  createdFrom: Schema.optionalKey(IsoTimestamp.annotate({ description: "Only requests made at or after this" })),
  createdTo: Schema.optionalKey(IsoTimestamp.annotate({ description: "Only requests made before this" })),
  limit: Schema.optionalKey(ListLimit),
  cursor: Schema.optionalKey(ListCursor)
})
export type ListRequestLogsParams = typeof ListRequestLogsParams.Type

const RequestIdParam = PrintableText.check(atMost(64)).annotate({
  description: "The request's `X-Request-Id` (the `x-request-id` header of its answer)"
})

/** The integration's own requests, as the service recorded them: for debugging an integration. */
export class RequestLogsGroup extends HttpApiGroup.make("requestLogs")
  .add(
    HttpApiEndpoint.get("listRequestLogs", "/request-logs", {
      query: ListRequestLogsParams,
      success: RequestLogList,
      error: groupErrors
    })
      .annotate(OpenApi.Summary, "List this integration's requests, newest first")
      .annotate(
        OpenApi.Description,
        "Every authenticated request of this integration in the last days (`REQUEST_LOG_RETENTION_DAYS`, 7 by default), newest first: method, path, status, `errorCode`, the error message, duration, request id, key, client address and a summary of the request and response bodies with every secret taken out. Filter by `statusClass`, `path` (a prefix), `errorCode`, `requestId` and the time range `createdFrom` (inclusive) to `createdTo` (exclusive). Pass `nextCursor` as `cursor` for the next page; it is `null` on the last one. Requests are recorded in the background, so one appears within a second or two of its answer; under extreme load some may not be recorded at all. The request-log endpoints themselves are not recorded."
      ),
    HttpApiEndpoint.get("getRequestLog", "/request-logs/:requestId", {
      params: { requestId: RequestIdParam },
      success: RequestLog,
      error: [...groupErrors, NotFoundError]
    })
      .annotate(OpenApi.Summary, "Get one request by its request id")
      .annotate(
        OpenApi.Description,
        "The request of this integration with this `X-Request-Id` (the latest, when a client sent the same id more than once). 404 for an id this integration has no request under (another integration's included)."
      )
  )
  .middleware(Authentication)
  .prefix("/api/integrations")
  .annotate(OpenApi.Title, "Request logs")
  .annotate(
    OpenApi.Description,
    "The integration's own requests as the service recorded them, without secrets: what was asked, what was answered and why."
  )
{}
