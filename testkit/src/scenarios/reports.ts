/**
 * Reconciliation reports (R-REPORT-1, R-REPORT-2): the payouts the kit creates are in the report of their range, as
 * the API answered them, in CSV (read with an RFC 4180 reader) and JSON Lines; another integration's report never
 * holds them; the daily statement's lines are the sums of its range's rows.
 */
import { type Payout, PAYOUT_REPORT_COLUMNS, PayoutReportRow, type Statement } from "@cop-integrations/contracts"
import { BigDecimal, Duration, Effect, Schema, Stream } from "effect"
import { Csv } from "effect/encoding"
import { ok, rejected } from "../api.ts"
import { check, checkNamesField } from "../check.ts"
import { failure, type ScenarioFailure } from "../failure.ts"
import { approvedUser, createPayout, payoutRequest } from "../fixtures.ts"
import { type Auth, wholeBody } from "../http.ts"
import { ahead, isPayoutStatus } from "../payoutStatuses.ts"
import { type Kit, scenario } from "../scenario.ts"

const REPORT_RULE = "the payouts report holds the range's payouts as the API answered them, in CSV and JSON Lines"
const ISOLATION_RULE = "another integration's payouts are never in a report"
const STATEMENT_RULE = "each line of the daily statement is exactly the sums of its range's report rows"

const PAYOUT_REPORT = "/api/integrations/reports/payouts"

interface Range {
  readonly from: string
  readonly to: string
}

const decodeRow = Schema.decodeUnknownEffect(PayoutReportRow)

/** The report of `range` as `format`, answered 200 with that format's content type. */
const fetchReport = (kit: Kit, range: Range, format: "csv" | "jsonl", auth: Auth = "primary") =>
  Effect.gen(function*() {
    const exchange = yield* kit.send({ method: "GET", path: PAYOUT_REPORT, query: { ...range, format }, auth })
    const type = format === "csv" ? "text/csv" : "application/jsonl"
    yield* check(
      exchange.response.status === 200 && (exchange.response.headers["content-type"] ?? "").startsWith(type),
      REPORT_RULE,
      {
        expected: `200 with Content-Type ${type}`,
        actual: `${exchange.response.status} ${exchange.response.headers["content-type"] ?? "(no content type)"}`,
        exchange
      }
    )
    return exchange
  })

/** The JSON Lines report's rows, each decoded with the contract's PayoutReportRow. */
const jsonLines = (kit: Kit, range: Range, auth: Auth = "primary") =>
  Effect.gen(function*() {
    const exchange = yield* fetchReport(kit, range, "jsonl", auth)
    const lines = wholeBody(exchange.response).split("\n").filter((line) => line !== "")
    const rows = yield* Effect.forEach(lines, (line) =>
      Effect.try({
        try: () => JSON.parse(line) as unknown,
        catch: (error) => String(error)
      }).pipe(
        Effect.flatMap((json) => decodeRow(json)),
        Effect.mapError((error) =>
          failure(REPORT_RULE, {
            expected: "each line a PayoutReportRow",
            actual: `${String(error).slice(0, 300)}: ${line.slice(0, 200)} … ${line.slice(-200)}`,
            exchange
          })
        )
      ))
    return { rows, exchange }
  })

/** The CSV report read as RFC 4180 records (effect's CSV reader), the header first. */
const csvRecords = (kit: Kit, range: Range) =>
  Effect.gen(function*() {
    const exchange = yield* fetchReport(kit, range, "csv")
    const records = yield* Stream.make(wholeBody(exchange.response)).pipe(
      Stream.pipeThroughChannel(Csv.decodeString()),
      Stream.runCollect,
      Effect.mapError((error) => failure(REPORT_RULE, { expected: "RFC 4180 CSV", actual: String(error), exchange }))
    )
    return { records, exchange }
  })

/** What the report must show of a payout, from the API's own answer for it. */
const expectedOf = (payout: Payout) => ({
  payoutId: payout.payoutId,
  createdAt: payout.createdAt,
  status: payout.status,
  userAddress: payout.userAddress,
  fromToken: payout.fromToken,
  sourceAmount: payout.sourceAmount,
  depositAmount: payout.deposit.amount,
  destinationCop: payout.destinationCop,
  sellRate: payout.receipt.exchangeRate.sellRateUsdCop,
  effectiveRate: payout.quote.effectiveUsdCop,
  breBKey: payout.receipt.breBKey,
  accountOwnerName: payout.destinationPreview.accountOwnerName
})

const differences = (expected: Readonly<Record<string, unknown>>, row: Readonly<Record<string, unknown>>) =>
  Object.entries(expected).filter(([key, value]) => row[key] !== value).map(([key, value]) =>
    `${key}: ${JSON.stringify(row[key])} (the API: ${JSON.stringify(value)})`
  )

/** Two payouts of one user, the second named as a spreadsheet formula; and the range from the first to the second. */
const twoPayouts = (kit: Kit) =>
  Effect.gen(function*() {
    const user = yield* approvedUser(kit)
    const first = yield* createPayout(kit, payoutRequest(user))
    const second = yield* createPayout(kit, payoutRequest(user, { accountOwnerName: "=SUM(1+1)" }))
    const range = { from: first.createdAt, to: new Date(Date.parse(second.createdAt) + 1).toISOString() }
    return { made: [first, second], range }
  })

const sum = (values: ReadonlyArray<string | null>) =>
  values.reduce(
    (total, value) => (value === null ? total : BigDecimal.sum(total, BigDecimal.fromStringUnsafe(value))),
    BigDecimal.fromBigInt(0n)
  )

/** The statement's lines that are not the sums of `rows` (one entry per difference). */
const statementDifferences = (statement: Statement, rows: ReadonlyArray<PayoutReportRow>) => {
  const found: Array<string> = []
  const counted = statement.payouts.reduce((n, line) => n + line.count, 0)
  if (counted !== rows.length) found.push(`${counted} payouts counted, ${rows.length} rows in the report`)
  for (const line of statement.payouts) {
    const mine = rows.filter((row) => row.status === line.status && row.fromToken === line.fromToken)
    const pairs = [
      ["count", String(line.count), String(mine.length)],
      ["sourceAmount", line.sourceAmount, mine.map((row) => row.sourceAmount)],
      ["depositAmount", line.depositAmount, mine.map((row) => row.depositAmount)],
      ["serviceFee", line.serviceFee, mine.map((row) => row.serviceFee)],
      ["destinationCop", line.destinationCop, mine.map((row) => row.destinationCop)],
      ["copDelivered", line.copDelivered, mine.map((row) => row.copDelivered)]
    ] as const
    for (const [name, stated, values] of pairs) {
      const equal = typeof values === "string"
        ? stated === values
        : BigDecimal.equals(BigDecimal.fromStringUnsafe(stated), sum(values))
      if (!equal) found.push(`${line.status} ${line.fromToken} ${name}: ${stated}, the rows: ${String(values)}`)
    }
  }
  return found
}

const STABLE_ATTEMPTS = 8
/** Between reads that saw the day change: the payouts of an earlier run may still be moving (a few seconds). */
const SETTLE_PAUSE = Duration.millis(500)

/**
 * A day's statement against its report. Payouts of the day may change while the two are read; a comparison counts
 * only when the statement read after the report is the one read before it.
 */
const checkStatement = (kit: Kit, date: string): Effect.Effect<boolean, ScenarioFailure> =>
  Effect.gen(function*() {
    for (let attempt = 0; attempt < STABLE_ATTEMPTS; attempt++) {
      const statement = yield* ok(yield* kit.call("statement", { query: { date } }), "200 Statement")
      const { exchange, rows } = yield* jsonLines(kit, { from: statement.from, to: statement.to })
      const after = yield* ok(yield* kit.call("statement", { query: { date } }), "200 Statement")
      if (JSON.stringify(after) !== JSON.stringify(statement)) {
        yield* Effect.sleep(SETTLE_PAUSE)
        continue
      }
      const found = statementDifferences(statement, rows)
      yield* check(found.length === 0, STATEMENT_RULE, {
        expected: `the statement of ${date} equal to the sums of its ${rows.length} report rows`,
        actual: found.join("; "),
        exchange
      })
      return true
    }
    return false
  })

export const reportScenarios = [
  scenario({
    id: "REPORT-001",
    title: "the payouts report holds the range's payouts as the API answered them, in JSON Lines and in CSV",
    rules: ["R-REPORT-1"],
    tags: ["reports"],
    requires: { mock: true, moneyMoving: true },
    run: (kit) =>
      Effect.gen(function*() {
        const { made, range } = yield* twoPayouts(kit)
        const { exchange, rows } = yield* jsonLines(kit, range)
        for (const payout of made) {
          const row = rows.find((candidate) => candidate.payoutId === payout.payoutId)
          const found = row === undefined ? ["not in the report"] : differences(expectedOf(payout), row)
          yield* check(found.length === 0, REPORT_RULE, {
            expected: `${payout.payoutId} in the report of ${range.from} to ${range.to}, as the API answered it`,
            actual: found.join("; "),
            exchange
          })
        }
        const order = rows.map((row) => `${row.createdAt} ${row.payoutId}`)
        yield* check(order.join() === [...order].sort().join(), REPORT_RULE, {
          expected: "rows oldest first (createdAt, then payoutId)",
          actual: order.join(", "),
          exchange
        })

        const csv = yield* csvRecords(kit, range)
        const [header, ...records] = csv.records
        yield* check(header?.join(",") === PAYOUT_REPORT_COLUMNS.join(","), REPORT_RULE, {
          expected: `the header ${PAYOUT_REPORT_COLUMNS.join(",")}`,
          actual: header?.join(",") ?? "no header",
          exchange: csv.exchange
        })
        const statusColumn = PAYOUT_REPORT_COLUMNS.indexOf("status")
        for (const row of rows) {
          const cells = PAYOUT_REPORT_COLUMNS.map((column) => {
            const value = row[column]
            return value === null ? "" : /^[=+\-@]/.test(value) ? `'${value}` : value
          })
          const record = records.find((candidate) => candidate[0] === row.payoutId)
          // another scenario's payout in the range may move on between the two reads: not a difference
          const csvStatus = record?.[statusColumn] ?? ""
          const movedOn = isPayoutStatus(row.status) && isPayoutStatus(csvStatus) && ahead(row.status, csvStatus) &&
            !made.some((payout) => payout.payoutId === row.payoutId)
          if (movedOn) continue
          yield* check(record?.join("\u0000") === cells.join("\u0000"), REPORT_RULE, {
            expected: `${row.payoutId}'s CSV row with the JSON line's values (a formula's first character after ')`,
            actual: record === undefined ? "no such row" : JSON.stringify(record),
            exchange: csv.exchange
          })
        }

        const backwards = yield* kit.call("payoutReport", { query: { from: range.to, to: range.from } })
        const refused = yield* rejected(backwards, 400, "none", REPORT_RULE)
        yield* checkNamesField(REPORT_RULE, refused, "to", backwards.exchange)
      })
  }),
  scenario({
    id: "REPORT-002",
    title: "another integration's report of the same range does not hold the payouts",
    rules: ["R-REPORT-1"],
    tags: ["reports", "isolation"],
    requires: { mock: true, moneyMoving: true, secondKey: true },
    run: (kit) =>
      Effect.gen(function*() {
        const { made, range } = yield* twoPayouts(kit)
        const { exchange, rows } = yield* jsonLines(kit, range, "second")
        const leaked = rows.filter((row) => made.some((payout) => payout.payoutId === row.payoutId))
        yield* check(leaked.length === 0, ISOLATION_RULE, {
          expected: "none of the first integration's payouts",
          actual: leaked.map((row) => row.payoutId).join(", "),
          exchange
        })
      })
  }),
  scenario({
    id: "REPORT-003",
    title: "the daily statement's lines are exactly the sums of its range's report rows",
    rules: ["R-REPORT-2"],
    tags: ["reports", "money"],
    requires: { mock: true, moneyMoving: true },
    // A day's statement holds every payout of the integration that day: beside the scenarios that move payouts, the
    // day changes between its reads (a busy CI machine saw all of them change). Alone, only its own payouts are new.
    runFirst: true,
    run: (kit) =>
      Effect.gen(function*() {
        const { made } = yield* twoPayouts(kit)
        const today = made[0]!.createdAt.slice(0, 10)
        const yesterday = new Date(Date.parse(`${today}T00:00:00.000Z`) - 86_400_000).toISOString().slice(0, 10)
        yield* checkStatement(kit, yesterday)
        const checked = yield* checkStatement(kit, today)
        if (!checked) {
          kit.warn(
            `today's statement could not be compared: the day's payouts changed during each of ${STABLE_ATTEMPTS} reads`
          )
        }
        const bad = yield* kit.call("statement", { query: { date: "2026-02-30" } })
        const refused = yield* rejected(bad, 400, "none", STATEMENT_RULE)
        yield* checkNamesField(STATEMENT_RULE, refused, "date", bad.exchange)
      })
  })
]
