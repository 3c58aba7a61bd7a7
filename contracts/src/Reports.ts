import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Authentication } from "./Auth.ts"
import { groupErrors } from "./Breb.ts"
import { ServiceUnavailableError } from "./Errors.ts"
import { IntegrationId } from "./Ids.ts"
import { CalendarDate, DecimalString, FundingToken, IsoTimestamp, unnamed } from "./Primitives.ts"
import { SwapToken } from "./Swap.ts"

/**
 * The columns of the payouts report, in their order. A later release only ever appends columns (a reader keyed on a
 * column's position keeps working); the JSON Lines form has the same names as keys.
 */
export const PAYOUT_REPORT_COLUMNS = [
  "payoutId",
  "createdAt",
  "depositMinedAt",
  "completedAt",
  "failedAt",
  "status",
  "failureCode",
  "userAddress",
  "fromToken",
  "sourceAmount",
  "depositAmount",
  "serviceFee",
  "feeSwapUsd",
  "feeBridgeFxUsd",
  "feeBridgeUsd",
  "feeCopbyUsd",
  "sellRate",
  "effectiveRate",
  "destinationCop",
  "copDelivered",
  "breBKey",
  "accountOwnerName",
  "txHash",
  "feeTxHash",
  "refundStatus",
  "refundAmount",
  "refundTxHash",
  "providerTransferId",
  "railReference",
  "batchId",
  "reference"
] as const

/** The columns of the swaps report, in their order; appended to only, as the payouts report's. */
export const SWAP_REPORT_COLUMNS = [
  "swapId",
  "createdAt",
  "updatedAt",
  "status",
  "userAddress",
  "fromToken",
  "toToken",
  "amountIn",
  "expectedAmountOut",
  "minAmountOut",
  "slippageBps",
  "feeSwapUsd",
  "txHash"
] as const

const Text = Schema.NullOr(Schema.String)
const Amount = Schema.NullOr(DecimalString)
const Time = Schema.NullOr(IsoTimestamp)

/** One payout of the report: every value a string (exact decimals, ISO times in UTC) or null (an empty CSV cell). */
export const PayoutReportRow = Schema.Struct({
  payoutId: Schema.String,
  createdAt: IsoTimestamp,
  depositMinedAt: Time.annotate({
    description: "When the deposit's transaction was mined (its block's time when the chain gives it), once confirmed"
  }),
  completedAt: Time,
  failedAt: Time.annotate({ description: "When it failed or its deposit began going back (`failure.at`)" }),
  status: Schema.String,
  failureCode: Text,
  userAddress: Schema.String,
  fromToken: FundingToken,
  sourceAmount: unnamed(DecimalString, { description: "What the user pays, in `fromToken`" }),
  depositAmount: unnamed(DecimalString, { description: "The USDC deposit to the provider" }),
  serviceFee: unnamed(DecimalString, { description: "The service fee transfer, in `fromToken`" }),
  feeSwapUsd: Amount,
  feeBridgeFxUsd: Amount,
  feeBridgeUsd: Amount,
  feeCopbyUsd: Amount,
  sellRate: DecimalString,
  effectiveRate: unnamed(DecimalString, { description: "USD→COP with every fee included" }),
  destinationCop: DecimalString,
  copDelivered: Amount.annotate({ description: "The COP the provider reports it delivered, once it does" }),
  breBKey: Schema.String.annotate({ description: "Masked: only the last 4 characters shown" }),
  accountOwnerName: Schema.String,
  txHash: Text,
  feeTxHash: Text,
  refundStatus: Text,
  refundAmount: Amount,
  refundTxHash: Text,
  providerTransferId: Schema.String,
  railReference: Text.annotate({ description: "The Bre-B rail's reference, when the provider gives one" }),
  batchId: Text,
  reference: Text
}).annotate({ identifier: "PayoutReportRow" })
export type PayoutReportRow = typeof PayoutReportRow.Type

export const SwapReportRow = Schema.Struct({
  swapId: Schema.String,
  createdAt: IsoTimestamp,
  updatedAt: unnamed(IsoTimestamp, { description: "When its status last changed" }),
  status: Schema.String,
  userAddress: Schema.String,
  fromToken: SwapToken,
  toToken: SwapToken,
  amountIn: DecimalString,
  expectedAmountOut: DecimalString,
  minAmountOut: DecimalString,
  slippageBps: Schema.String,
  feeSwapUsd: Amount,
  txHash: Text
}).annotate({ identifier: "SwapReportRow" })
export type SwapReportRow = typeof SwapReportRow.Type

export const ReportFormat = Schema.Literals(["csv", "jsonl"]).annotate({
  identifier: "ReportFormat",
  description:
    "`csv` (RFC 4180, a header row, CRLF; text a partner supplied that a spreadsheet would run as a formula is prefixed with `'`) or `jsonl` (one JSON object per line, values as given)"
})
export type ReportFormat = typeof ReportFormat.Type

export const ReportParams = Schema.Struct({
  from: unnamed(IsoTimestamp, { description: "Resources created at or after this" }),
  to: unnamed(IsoTimestamp, { description: "Resources created before this (later than `from`)" }),
  format: Schema.optionalKey(unnamed(ReportFormat, { description: "`csv` (the default) or `jsonl`" }))
})
export type ReportParams = typeof ReportParams.Type

export const StatementParams = Schema.Struct({
  date: unnamed(CalendarDate, { description: "The UTC day, `YYYY-MM-DD`" })
})

const Count = Schema.Number.check(Schema.isInt({ identifier: "Int", toJsonSchema: () => ({ type: "integer" }) }))

export const PayoutStatementLine = Schema.Struct({
  status: Schema.String,
  fromToken: FundingToken,
  count: Count,
  sourceAmount: DecimalString,
  depositAmount: DecimalString,
  serviceFee: DecimalString,
  destinationCop: DecimalString,
  copDelivered: unnamed(DecimalString, { description: "Of the payouts whose delivery the provider reported" })
}).annotate({ identifier: "PayoutStatementLine" })

export const SwapStatementLine = Schema.Struct({
  status: Schema.String,
  fromToken: SwapToken,
  toToken: SwapToken,
  count: Count,
  amountIn: DecimalString,
  expectedAmountOut: DecimalString
}).annotate({ identifier: "SwapStatementLine" })

export const Statement = Schema.Struct({
  integrationId: IntegrationId,
  date: CalendarDate,
  from: IsoTimestamp,
  to: IsoTimestamp,
  final: Schema.Boolean.annotate({ description: "Whether the day had ended when the statement was made" }),
  payouts: Schema.Array(PayoutStatementLine),
  swaps: Schema.Array(SwapStatementLine)
}).annotate({
  identifier: "Statement",
  description:
    "The day's payouts and swaps (created from `from` to `to`, by their status now) summed per status and token. Each line's amounts are exactly the sums of the same day's report rows with that status and token."
})
export type Statement = typeof Statement.Type

/**
 * A report's body: CSV or JSON Lines, as `format` asks. The document shows each JSON line's schema
 * (./ReportsSection.ts); the service writes both itself, streamed.
 */
const reportBody = HttpApiSchema.StreamUint8Array({ contentType: ["text/csv", "application/jsonl"] })

const reportDescription = (what: string, columns: ReadonlyArray<string>) =>
  `Every ${what} this integration created from \`from\` (inclusive) to \`to\` (exclusive), oldest first, streamed (any range: the service reads it from the database a page at a time). \`format=csv\` (the default) answers RFC 4180 CSV with a header row; \`format=jsonl\` one JSON object per line. Amounts are exact decimal strings, times ISO 8601 in UTC, an absent value an empty cell (null in JSON). Columns, in order (later releases only append): ${
    columns.map((column) => `\`${column}\``).join(", ")
  }. A range reaching past now covers what was created before the request. An answer cut short (a dropped connection, a database failure midway) ends without its final chunk, so a client never mistakes it for the whole report.`

/** Reconciliation: every payout and swap of a range as CSV or JSON Lines, and the day's totals. */
export class ReportsGroup extends HttpApiGroup.make("reports")
  .add(
    HttpApiEndpoint.get("payoutReport", "/reports/payouts", {
      query: ReportParams,
      success: reportBody,
      error: [...groupErrors, ServiceUnavailableError]
    })
      .annotate(OpenApi.Summary, "Report of payouts, CSV or JSON Lines")
      .annotate(OpenApi.Description, reportDescription("payout", PAYOUT_REPORT_COLUMNS)),
    HttpApiEndpoint.get("swapReport", "/reports/swaps", {
      query: ReportParams,
      success: reportBody,
      error: [...groupErrors, ServiceUnavailableError]
    })
      .annotate(OpenApi.Summary, "Report of swaps, CSV or JSON Lines")
      .annotate(OpenApi.Description, reportDescription("swap intent", SWAP_REPORT_COLUMNS)),
    HttpApiEndpoint.get("statement", "/reports/statement", {
      query: StatementParams,
      success: Statement,
      error: [...groupErrors, ServiceUnavailableError]
    })
      .annotate(OpenApi.Summary, "Daily statement: totals per status and token")
      .annotate(
        OpenApi.Description,
        "The payouts and swaps created on the UTC day `date`, counted and summed per status and token. Its totals add up exactly to the rows of the reports for the same range (`from` and `to` in the answer). `final` is false while the day is still under way (its figures can still change), and statuses are those of the moment it was asked."
      )
  )
  .middleware(Authentication)
  .prefix("/api/integrations")
  .annotate(OpenApi.Title, "Reports")
  .annotate(
    OpenApi.Description,
    "What a finance team reconciles with: every payout and swap of a range, and the day's totals."
  )
{}
