import { HttpApi, HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import type { Json, JsonObject } from "./OpenApiJson.ts"
import { PayoutReportRow, SwapReportRow } from "./Reports.ts"

/** Each report operation's JSON line, by the operation's id. */
export const REPORT_ROWS: Readonly<Record<string, string>> = {
  "reports.payoutReport": "PayoutReportRow",
  "reports.swapReport": "SwapReportRow"
}

const rows = HttpApiGroup.make("rows").add(
  HttpApiEndpoint.get("payoutRow", "/payout-row", { success: PayoutReportRow }),
  HttpApiEndpoint.get("swapRow", "/swap-row", { success: SwapReportRow })
)

/** The reports' row schemas, compiled as the paths' are (`finish` is the document's own finishing of schemas). */
export const reportRowSchemas = (finish: (node: Json) => Json): JsonObject => {
  const compiled = finish(OpenApi.fromApi(HttpApi.make("rows").add(rows))) as JsonObject
  return (compiled["components"] as JsonObject)["schemas"] as JsonObject
}

/** The media types of a report's answer: CSV text, or JSON Lines of its row schema. */
export const reportContent = (row: string): JsonObject => ({
  "text/csv": {
    schema: {
      type: "string",
      description: "RFC 4180: a header row with the columns' names, then one row per resource; CRLF line ends"
    }
  },
  "application/jsonl": {
    schema: { $ref: `#/components/schemas/${row}`, description: "One such JSON object per line (JSON Lines)" }
  }
})
