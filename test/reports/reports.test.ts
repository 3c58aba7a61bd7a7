/**
 * Reconciliation reports (issue #34): every payout and swap of a range as CSV (RFC 4180, read back by Python's `csv`
 * module, an independent parser) or JSON Lines, each row the same figures the API answers for that payout; paged
 * through the database past a page's size; spreadsheet-safe cells; another integration's rows never in them; the
 * daily statement's totals exactly the sums of the day's rows; bad ranges and dates a 400 naming the field.
 */
import { spawnSync } from "node:child_process"
import {
  type Payout,
  PAYOUT_REPORT_COLUMNS,
  PayoutReportRow,
  Statement,
  SWAP_REPORT_COLUMNS,
  SwapReportRow
} from "@cop-integrations/contracts"
import { BigDecimal, Schema } from "effect"
import { describe, expect } from "vitest"
import { httpTest } from "../support/fixture.ts"
import { expectBadRequest, newAddress, newPartner, newTxHash, type Partner, sql, type Wire } from "../support/flows.ts"

// The mock's lifecycle stays put: payouts are moved by the advance helper only.
const it = httpTest({ env: { MOCK_LIFECYCLE_DELAY_MS: "600000" } })

const REPORTS = "/api/integrations/reports"
const ADVANCE = "/api/integrations/test-helpers/payouts"
const SWAPS = "/api/integrations/swaps"

const decodePayoutRow = (line: unknown) => Schema.decodeUnknownSync(PayoutReportRow)(line)
const decodeSwapRow = (line: unknown) => Schema.decodeUnknownSync(SwapReportRow)(line)

const jsonLines = (wire: Wire): ReadonlyArray<unknown> => {
  expect(wire.status, wire.text).toBe(200)
  expect(wire.headers.get("content-type")).toMatch(/^application\/jsonl/)
  expect(wire.text === "" || wire.text.endsWith("\n")).toBe(true)
  return wire.text.split("\n").filter((line) => line !== "").map((line) => JSON.parse(line))
}

const pythonBinary = ["python3", "python"].find((name) => spawnSync(name, ["--version"]).status === 0)

/** The CSV as Python's `csv` module reads it (an independent RFC 4180 reader), as arrays of cells. */
const pythonCsv = (text: string): ReadonlyArray<ReadonlyArray<string>> => {
  const read = spawnSync(pythonBinary!, [
    "-c",
    "import csv, io, json, sys\n" +
    "rows = list(csv.reader(io.StringIO(sys.stdin.buffer.read().decode('utf-8'), newline=''), strict=True))\n" +
    "json.dump(rows, sys.stdout)"
  ], { input: Buffer.from(text, "utf8") })
  expect(read.status, read.stderr.toString()).toBe(0)
  return JSON.parse(read.stdout.toString())
}

const csvOf = (wire: Wire): string => {
  expect(wire.status, wire.text).toBe(200)
  expect(wire.headers.get("content-type")).toMatch(/^text\/csv/)
  expect(wire.headers.get("content-disposition")).toMatch(/^attachment; filename="payouts-.*\.csv"$|swaps-/)
  return wire.text
}

/** A CSV's rows as records keyed by its header (which must be `columns`), empty cells as null. */
const recordsOf = (rows: ReadonlyArray<ReadonlyArray<string>>, columns: ReadonlyArray<string>) => {
  expect(rows[0]).toEqual(columns)
  return rows.slice(1).map((cells) => {
    expect(cells).toHaveLength(columns.length)
    return Object.fromEntries(columns.map((column, i) => [column, cells[i] === "" ? null : cells[i]]))
  })
}

const range = (from: Date, to: Date, format: "csv" | "jsonl") => ({
  from: from.toISOString(),
  to: to.toISOString(),
  format
})

const advance = async (partner: Partner, payoutId: string, body: Record<string, string>) => {
  const advanced = await partner.post(`${ADVANCE}/${payoutId}/advance`, body)
  expect(advanced.status, advanced.text).toBe(200)
}

/** Payouts in the states a report shows differently: awaiting, confirmed, completed, failed and refunded. */
const payoutsInEveryState = async (partner: Partner, user: string, accountOwnerName = "Maria Perez") => {
  const made: Array<string> = []
  for (const to of [null, "confirmed", "completed", "failed", "refunded"] as const) {
    const payout = await partner.payout(user, { accountOwnerName })
    made.push(payout.payoutId)
    if (to === null) continue
    const confirmed = await partner.confirm(payout.payoutId, { txHash: newTxHash(), feeTxHash: newTxHash() })
    expect(confirmed.status, confirmed.text).toBe(200)
    if (to === "failed") await advance(partner, payout.payoutId, { to, failureCode: "breb_key_not_found" })
    else if (to !== "confirmed") await advance(partner, payout.payoutId, { to })
  }
  return made
}

const getPayout = async (partner: Partner, payoutId: string): Promise<Payout> => {
  const wire = await partner.getPayout(payoutId)
  expect(wire.status, wire.text).toBe(200)
  return wire.json as Payout
}

/** What the report must say of a payout, read from the API's own answer for it. */
const expectedRow = (payout: Payout) => {
  const fee = (code: string) => payout.fees.find((leg) => leg.code === code)?.amountUsd ?? null
  return {
    payoutId: payout.payoutId,
    createdAt: payout.createdAt,
    completedAt: payout.receipt.completedAt,
    failedAt: payout.failure?.at ?? null,
    status: payout.status,
    failureCode: payout.failure?.code ?? null,
    userAddress: payout.userAddress,
    fromToken: payout.fromToken,
    sourceAmount: payout.sourceAmount,
    depositAmount: payout.deposit.amount,
    feeSwapUsd: fee("swap"),
    feeBridgeFxUsd: fee("bridge_fx"),
    feeBridgeUsd: fee("bridge"),
    feeCopbyUsd: fee("copby"),
    sellRate: payout.receipt.exchangeRate.sellRateUsdCop,
    effectiveRate: payout.quote.effectiveUsdCop,
    destinationCop: payout.destinationCop,
    breBKey: payout.receipt.breBKey,
    txHash: payout.txHash,
    feeTxHash: payout.feeTxHash,
    refundStatus: payout.refund?.status ?? null,
    refundAmount: payout.refund?.amount ?? null,
    refundTxHash: payout.refund?.txHash ?? null,
    depositMinedAt: ((hop) => hop === undefined ? null : hop.blockTime ?? hop.at)(
      payout.timeline.find((hop) => hop.status === "deposit_mined")
    )
  }
}

describe("the payouts report", () => {
  it("CSV read by Python's csv module and JSON Lines: one row per payout of the range, as the API answers it, oldest first; another integration's never", async ({ server, partner, user }) => {
    const from = new Date()
    const mine = await payoutsInEveryState(partner, user)
    const other = await newPartner(server)
    const theirs = await payoutsInEveryState(other, await other.approvedUser())
    // The mock chain's deposit_mined hop has no block time; a live confirm's has one (PayoutConfirm), which wins.
    const mined = mine[1]!
    const blockTime = new Date(Date.now() - 5_000).toISOString()
    await sql(server, (q) =>
      q`UPDATE payouts SET timeline = (
          SELECT jsonb_agg(CASE WHEN hop->>'status' = 'deposit_mined' THEN hop || jsonb_build_object('blockTime', ${blockTime}::text)
                           ELSE hop END ORDER BY i)
          FROM jsonb_array_elements(timeline) WITH ORDINALITY AS hops(hop, i))
        WHERE id = ${mined} RETURNING id`)
    const to = new Date(Date.now() + 1)

    const lines = jsonLines(await partner.get(`${REPORTS}/payouts`, range(from, to, "jsonl"))).map(decodePayoutRow)
    expect(lines.map((row) => row.payoutId).sort()).toEqual([...mine].sort())
    const order = lines.map((row) => `${row.createdAt} ${row.payoutId}`)
    expect([...order].sort()).toEqual(order)
    for (const row of lines) {
      const payout = await getPayout(partner, row.payoutId)
      expect(row).toMatchObject(expectedRow(payout))
      expect(Object.keys(row)).toEqual(PAYOUT_REPORT_COLUMNS)
    }
    const refunded = lines.find((row) => row.status === "refunded")!
    expect(refunded.refundStatus).not.toBeNull()
    expect(lines.filter((row) => row.txHash !== null)).toHaveLength(4)
    expect(lines.filter((row) => row.depositMinedAt !== null)).toHaveLength(4)
    expect(lines.find((row) => row.payoutId === mined)!.depositMinedAt).toBe(blockTime)

    const csv = csvOf(await partner.get(`${REPORTS}/payouts`, range(from, to, "csv")))
    expect(csv.split("\r\n")[0]).toBe(PAYOUT_REPORT_COLUMNS.join(","))
    if (pythonBinary !== undefined) {
      expect(recordsOf(pythonCsv(csv), PAYOUT_REPORT_COLUMNS)).toEqual(lines)
    }

    const theirLines = jsonLines(await other.get(`${REPORTS}/payouts`, range(from, to, "jsonl"))).map(decodePayoutRow)
    expect(theirLines.map((row) => row.payoutId).sort()).toEqual([...theirs].sort())
  })

  it.skipIf(pythonBinary === undefined)(
    "Python's csv module reads the CSV (skipped, loudly, without Python)",
    async ({ partner, user }) => {
      const from = new Date()
      const names = ["Ana \"La Flaca\" Ruiz", "Pérez, María José", "Zoë Ñandú 東京"]
      for (const name of names) await partner.payout(user, { accountOwnerName: name })
      const to = new Date(Date.now() + 1)
      const csv = csvOf(await partner.get(`${REPORTS}/payouts`, range(from, to, "csv")))
      const records = recordsOf(pythonCsv(csv), PAYOUT_REPORT_COLUMNS)
      expect(records.map((record) => record["accountOwnerName"])).toEqual(names)
    }
  )

  it("a partner's text that a spreadsheet would run as a formula is written with a leading '; JSON Lines keeps it as given", async ({ partner, user }) => {
    const from = new Date()
    const formulas = [
      "=HYPERLINK(\"http://attacker.example/\",\"click\")",
      "+1+cmd|' /C calc'!A0",
      "-2+3",
      "@SUM(A1:A9)"
    ]
    for (const name of formulas) await partner.payout(user, { accountOwnerName: name })
    await partner.payout(user, { accountOwnerName: "Maria = Perez" })
    const to = new Date(Date.now() + 1)

    const csv = csvOf(await partner.get(`${REPORTS}/payouts`, range(from, to, "csv")))
    // No cell starts a formula, quoted or not (the service's own values never start so).
    for (const line of csv.split("\r\n").slice(1)) expect(line).not.toMatch(/(^|,)"?[=+\-@]/)
    if (pythonBinary !== undefined) {
      const column = PAYOUT_REPORT_COLUMNS.indexOf("accountOwnerName")
      const cells = pythonCsv(csv).slice(1).map((row) => row[column]!)
      expect(cells.sort()).toEqual([...formulas.map((name) => `'${name}`), "Maria = Perez"].sort())
    }

    const lines = jsonLines(await partner.get(`${REPORTS}/payouts`, range(from, to, "jsonl"))).map(decodePayoutRow)
    expect(lines.map((row) => row.accountOwnerName).sort()).toEqual([...formulas, "Maria = Perez"].sort())
  })

  it("reads the database a page at a time: 2,345 payouts, many created in the same millisecond, each once and in order", async ({ server }) => {
    // An integration of its own: the range holds nothing else.
    const partner = await newPartner(server)
    const seed = await partner.payout(await partner.approvedUser())
    // Copies created before the seed (a report covers only what was created before it is asked).
    const to = new Date(Date.parse(seed.createdAt) + 1)
    const from = new Date(Date.parse(seed.createdAt) - 60_000)
    const copies = 2_344
    await sql(server, (q) =>
      q`INSERT INTO payouts
          SELECT (p).* FROM (
            SELECT jsonb_populate_record(p, jsonb_build_object(
              'id', p.id || '_' || lpad(n::text, 5, '0'),
              'provider_transfer_id', p.provider_transfer_id || '_' || n,
              'created_at', p.created_at - (n / 100) * interval '1 millisecond')) AS p
            FROM payouts p, generate_series(1, ${copies}) AS n WHERE p.id = ${seed.payoutId}) AS copied
          RETURNING id`)

    const lines = jsonLines(await partner.get(`${REPORTS}/payouts`, range(from, to, "jsonl"))).map(decodePayoutRow)
    expect(lines).toHaveLength(copies + 1)
    expect(new Set(lines.map((row) => row.payoutId)).size).toBe(copies + 1)
    const order = lines.map((row) => [row.createdAt, row.payoutId] as const)
    const sorted = [...order].sort(([a, x], [b, y]) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0))
    expect(order).toEqual(sorted)

    const csv = csvOf(await partner.get(`${REPORTS}/payouts`, range(from, to, "csv")))
    expect(csv.split("\r\n").filter((line) => line !== "")).toHaveLength(copies + 2)
  })

  it("an empty range is the header alone (CSV) or nothing (JSON Lines)", async ({ partner }) => {
    const from = new Date(Date.UTC(2001, 0, 1))
    const to = new Date(Date.UTC(2001, 0, 2))
    expect(csvOf(await partner.get(`${REPORTS}/payouts`, range(from, to, "csv")))).toBe(
      `${PAYOUT_REPORT_COLUMNS.join(",")}\r\n`
    )
    expect(jsonLines(await partner.get(`${REPORTS}/payouts`, range(from, to, "jsonl")))).toEqual([])
  })

  it("a bad range or format is a 400 naming the field", async ({ partner }) => {
    const at = "2026-11-27T00:00:00.000Z"
    expectBadRequest(await partner.get(`${REPORTS}/payouts`, { to: at }), "from")
    expectBadRequest(await partner.get(`${REPORTS}/payouts`, { from: at, to: at }), "to")
    expectBadRequest(await partner.get(`${REPORTS}/payouts`, { from: at, to: "2026-11-26T00:00:00Z" }), "to")
    expectBadRequest(await partner.get(`${REPORTS}/payouts`, { from: "yesterday", to: at }), "from")
    expectBadRequest(
      await partner.get(`${REPORTS}/swaps`, { from: "2026-11-26T00:00:00Z", to: at, format: "xlsx" }),
      "format"
    )
  })
})

describe("the swaps report", () => {
  it("one row per swap intent of the range, as the API answers it", async ({ partner }) => {
    const from = new Date()
    const made: Array<{ intentId: string; amountIn: string; expectedAmountOut: string; minAmountOut: string }> = []
    for (const amountIn of ["10", "12.5"]) {
      const wire = await partner.post(SWAPS, {
        userAddress: newAddress(),
        fromToken: "USDC",
        toToken: "COPm",
        amountIn
      })
      expect(wire.status, wire.text).toBe(201)
      made.push(wire.json as (typeof made)[number])
    }
    const confirmed = await partner.post(`${SWAPS}/${made[0]!.intentId}/confirm`, { txHash: newTxHash() })
    expect(confirmed.status, confirmed.text).toBe(200)
    const to = new Date(Date.now() + 1)

    const lines = jsonLines(await partner.get(`${REPORTS}/swaps`, range(from, to, "jsonl"))).map(decodeSwapRow)
    expect(lines.map((row) => row.swapId)).toEqual(made.map((swap) => swap.intentId))
    for (const row of lines) {
      const wire = await partner.get(`${SWAPS}/${row.swapId}`)
      const swap = wire.json as Record<string, unknown>
      expect(row).toMatchObject({
        status: swap["status"],
        amountIn: swap["amountIn"],
        expectedAmountOut: swap["expectedAmountOut"],
        minAmountOut: swap["minAmountOut"],
        slippageBps: String(swap["slippageBps"]),
        txHash: swap["txHash"],
        createdAt: swap["createdAt"],
        updatedAt: swap["updatedAt"]
      })
    }
    const csv = await partner.get(`${REPORTS}/swaps`, range(from, to, "csv"))
    expect(csv.status, csv.text).toBe(200)
    expect(csv.text.split("\r\n")[0]).toBe(SWAP_REPORT_COLUMNS.join(","))
    if (pythonBinary !== undefined) expect(recordsOf(pythonCsv(csv.text), SWAP_REPORT_COLUMNS)).toEqual(lines)
  })
})

const sum = (values: ReadonlyArray<string | null>): BigDecimal.BigDecimal =>
  values.reduce(
    (total, value) => (value === null ? total : BigDecimal.sum(total, BigDecimal.fromStringUnsafe(value))),
    BigDecimal.fromBigInt(0n)
  )

const sameAmount = (stated: string, rows: ReadonlyArray<string | null>) =>
  expect(BigDecimal.equals(BigDecimal.fromStringUnsafe(stated), sum(rows)), `${stated} vs the rows`).toBe(true)

describe("the daily statement", () => {
  it("its totals per status and token are exactly the sums of the day's report rows", async ({ server }) => {
    const partner = await newPartner(server)
    const payer = await partner.approvedUser()
    const [first] = await payoutsInEveryState(partner, payer)
    for (const destinationCop of ["10000.01", "123456.78", "999999.99"]) {
      await partner.payout(payer, { destinationCop })
    }
    for (const amountIn of ["1.000001", "2.5"]) {
      const wire = await partner.post(SWAPS, {
        userAddress: newAddress(),
        fromToken: "USDC",
        toToken: "COPm",
        amountIn
      })
      expect(wire.status, wire.text).toBe(201)
    }
    // The day of the first payout (the others may fall on the next one, around midnight UTC).
    const date = (await getPayout(partner, first!)).createdAt.slice(0, 10)

    const answer = await partner.get(`${REPORTS}/statement`, { date })
    expect(answer.status, answer.text).toBe(200)
    const statement = Schema.decodeUnknownSync(Statement)(answer.json)
    expect(statement).toMatchObject({ integrationId: partner.integrationId, date })
    expect(statement.final).toBe(Date.now() >= Date.parse(statement.to))
    const window = { from: new Date(statement.from), to: new Date(statement.to) }

    const payouts = jsonLines(await partner.get(`${REPORTS}/payouts`, range(window.from, window.to, "jsonl")))
      .map(decodePayoutRow)
    expect(statement.payouts.reduce((n, line) => n + line.count, 0)).toBe(payouts.length)
    for (const line of statement.payouts) {
      const rows = payouts.filter((row) => row.status === line.status && row.fromToken === line.fromToken)
      expect(line.count).toBe(rows.length)
      sameAmount(line.sourceAmount, rows.map((row) => row.sourceAmount))
      sameAmount(line.depositAmount, rows.map((row) => row.depositAmount))
      sameAmount(line.serviceFee, rows.map((row) => row.serviceFee))
      sameAmount(line.destinationCop, rows.map((row) => row.destinationCop))
      sameAmount(line.copDelivered, rows.map((row) => row.copDelivered))
    }
    expect(new Set(statement.payouts.map((line) => line.status)).size).toBeGreaterThanOrEqual(statement.final ? 1 : 4)

    const swaps = jsonLines(await partner.get(`${REPORTS}/swaps`, range(window.from, window.to, "jsonl")))
      .map(decodeSwapRow)
    expect(statement.swaps.reduce((n, line) => n + line.count, 0)).toBe(swaps.length)
    for (const line of statement.swaps) {
      const rows = swaps.filter((row) =>
        row.status === line.status && row.fromToken === line.fromToken && row.toToken === line.toToken
      )
      expect(line.count).toBe(rows.length)
      sameAmount(line.amountIn, rows.map((row) => row.amountIn))
      sameAmount(line.expectedAmountOut, rows.map((row) => row.expectedAmountOut))
    }
  })

  it("a day that has ended is final; a day without activity has no lines; a bad date is a 400 naming it", async ({ partner }) => {
    const answer = await partner.get(`${REPORTS}/statement`, { date: "2001-01-01" })
    expect(answer.status, answer.text).toBe(200)
    expect(answer.json).toEqual({
      integrationId: partner.integrationId,
      date: "2001-01-01",
      from: "2001-01-01T00:00:00.000Z",
      to: "2001-01-02T00:00:00.000Z",
      final: true,
      payouts: [],
      swaps: []
    })
    expectBadRequest(await partner.get(`${REPORTS}/statement`, { date: "2026-02-30" }), "date")
    expectBadRequest(await partner.get(`${REPORTS}/statement`, { date: "2026-11-27T00:00:00Z" }), "date")
    expectBadRequest(await partner.get(`${REPORTS}/statement`, {}), "date")
  })
})
