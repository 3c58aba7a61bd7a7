import type { JsonObject } from "./OpenApiJson.ts"

/** Each report operation's JSON line, by the operation's id. */
export const REPORT_ROWS: Readonly<Record<string, string>> = {
  "reports.payoutReport": "PayoutReportRow",
  "reports.swapReport": "SwapReportRow"
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
