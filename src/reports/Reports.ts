import {
  BadRequest,
  type IntegrationId,
  PAYOUT_REPORT_COLUMNS,
  type ReportFormat,
  type ReportParams,
  type Statement,
  SWAP_REPORT_COLUMNS
} from "@cop-integrations/contracts"
import { Clock, Context, Effect, Layer, Option, Stream } from "effect"
import { Csv, Ndjson } from "effect/encoding"
import type { KeysetRow } from "../db/Pagination.ts"
import { PageBudget } from "../db/PageBudget.ts"
import { type ReportPage, ReportRepo } from "./ReportRepo.ts"
import { csvCells, payoutReportRow, swapReportRow } from "./ReportRows.ts"

/** Rows a report reads per statement: a page is encoded and written before the next is read (constant memory). */
export const REPORT_PAGE_ROWS = 1_000

const DAY_MS = 86_400_000

/** A report ready to send: its body, and what to call it. */
export interface Report {
  readonly format: ReportFormat
  readonly filename: string
  readonly body: Stream.Stream<Uint8Array>
}

const afterLast = <Row extends KeysetRow>(page: ReportPage, rows: ReadonlyArray<Row>): Option.Option<ReportPage> => {
  const last = rows.at(-1)
  return rows.length < page.limit || last === undefined
    ? Option.none()
    : Option.some({ ...page, after: { createdAt: last.created_at, id: last.id } })
}

/**
 * Every row of the range, a page at a time. The first page is read before anything is answered, so a database that
 * is down is a 503, not a report cut short; later pages are read as the client takes the earlier ones.
 */
const allRows = <Row extends KeysetRow>(
  first: ReportPage,
  read: (page: ReportPage) => Effect.Effect<ReadonlyArray<Row>>
): Effect.Effect<Stream.Stream<Row>> =>
  Effect.map(read(first), (head) =>
    Stream.concat(
      Stream.fromArray(head),
      Option.match(afterLast(first, head), {
        onNone: () => Stream.empty,
        onSome: (next) =>
          Stream.paginate(next, (page) => Effect.map(read(page), (rows) => [rows, afterLast(page, rows)] as const))
      })
    ))

const encoded = <Row, Column extends string>(
  rows: Stream.Stream<Row>,
  format: ReportFormat,
  columns: ReadonlyArray<Column>,
  present: (row: Row) => Readonly<Record<Column, string | null>>
): Stream.Stream<Uint8Array> =>
  format === "jsonl"
    ? rows.pipe(Stream.map(present), Stream.pipeThroughChannel(Ndjson.encode()), Stream.orDie)
    : Stream.concat(Stream.make(columns), Stream.map(rows, (row) => csvCells(columns, present(row)))).pipe(
      Stream.pipeThroughChannel(Csv.encode())
    )

const checkedRange = (params: ReportParams) => {
  const from = new Date(params.from)
  const to = new Date(params.to)
  return to > from
    ? Effect.succeed({ from, to })
    : Effect.fail(new BadRequest({ error: "to: must be later than from" }))
}

const stamp = (date: Date) => date.toISOString().replaceAll(":", "")

/** Reconciliation reports of an integration's payouts and swaps, and its daily statement. */
export class Reports extends Context.Service<Reports>()("Reports", {
  make: Effect.gen(function*() {
    const repo = yield* ReportRepo
    const pageBudget = yield* PageBudget

    const report = <Row extends KeysetRow, Column extends string>(options: {
      readonly table: "payouts" | "swap_intents"
      readonly read: (page: ReportPage) => Effect.Effect<ReadonlyArray<Row>>
      readonly columns: ReadonlyArray<Column>
      readonly present: (row: Row) => Readonly<Record<Column, string | null>>
    }) =>
    (integrationId: IntegrationId, params: ReportParams): Effect.Effect<Report, BadRequest> =>
      Effect.gen(function*() {
        const { from, to } = yield* checkedRange(params)
        const before = yield* repo.endOf(options.table, integrationId, to)
        const read = (page: ReportPage) => pageBudget.withRows(page.limit)(options.read(page))
        const rows = yield* allRows({ integrationId, from, before, after: null, limit: REPORT_PAGE_ROWS }, read)
        const format = params.format ?? "csv"
        return {
          format,
          filename: `${options.table === "payouts" ? "payouts" : "swaps"}-${stamp(from)}-${stamp(to)}.${format}`,
          body: encoded(rows, format, options.columns, options.present)
        }
      })

    const payouts = report({
      table: "payouts",
      read: repo.payoutPage,
      columns: PAYOUT_REPORT_COLUMNS,
      present: payoutReportRow
    })

    const swaps = report({
      table: "swap_intents",
      read: repo.swapPage,
      columns: SWAP_REPORT_COLUMNS,
      present: swapReportRow
    })

    /** The UTC day's totals per status and token: the sums of that day's report rows, computed by the database. */
    const statement = Effect.fn("Reports.statement")(function*(integrationId: IntegrationId, date: string) {
      const from = new Date(`${date}T00:00:00.000Z`)
      const to = new Date(from.getTime() + DAY_MS)
      const totals = yield* repo.totals({ integrationId, from, to })
      const now = yield* Clock.currentTimeMillis
      return {
        integrationId,
        date,
        from: from.toISOString(),
        to: to.toISOString(),
        final: now >= to.getTime(),
        payouts: totals.payouts.map((line) => ({
          status: line.status,
          fromToken: line.from_token,
          count: line.count,
          sourceAmount: line.source_amount,
          depositAmount: line.deposit_amount,
          serviceFee: line.service_fee,
          destinationCop: line.destination_cop,
          copDelivered: line.cop_delivered
        })),
        swaps: totals.swaps.map((line) => ({
          status: line.status,
          fromToken: line.from_token,
          toToken: line.to_token,
          count: line.count,
          amountIn: line.amount_in,
          expectedAmountOut: line.expected_amount_out
        }))
      } satisfies Statement
    })

    return { payouts, swaps, statement } as const
  })
}) {
  static readonly Default = Layer.effect(this, this.make)
}
