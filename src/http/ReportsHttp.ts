import { CurrentIntegration, IntegrationsApi } from "@cop-integrations/contracts"
import { Effect } from "effect"
import { HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { type Report, Reports } from "../reports/Reports.ts"

const CONTENT_TYPES = {
  csv: "text/csv; charset=utf-8; header=present",
  jsonl: "application/jsonl; charset=utf-8"
} as const

/** A report streamed as it is read, to be saved as a file. */
const answerReport = (report: Report) =>
  HttpServerResponse.stream(report.body, {
    contentType: CONTENT_TYPES[report.format],
    headers: { "content-disposition": `attachment; filename="${report.filename}"` }
  })

export const ReportsHttpLive = HttpApiBuilder.group(
  IntegrationsApi,
  "reports",
  (handlers) =>
    Effect.gen(function*() {
      const reports = yield* Reports
      return handlers
        .handle("payoutReport", ({ query }) =>
          Effect.flatMap(CurrentIntegration, ({ integrationId }) =>
            Effect.map(reports.payouts(integrationId, query), answerReport)))
        .handle("swapReport", ({ query }) =>
          Effect.flatMap(CurrentIntegration, ({ integrationId }) =>
            Effect.map(reports.swaps(integrationId, query), answerReport)))
        .handle("statement", ({ query }) =>
          Effect.flatMap(CurrentIntegration, ({ integrationId }) =>
            reports.statement(integrationId, query.date)))
    })
)
