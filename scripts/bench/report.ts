/**
 * `DATABASE_URL=… npx tsx scripts/bench/report.ts`: the payouts report of a large range, as `npm start` serves it.
 * Creates one payout through the API, copies it in the database until the integration has BENCH_REPORT_ROWS payouts
 * (default 1,000,000; an empty database is best, the copies are not removed), then reads the whole report as CSV and
 * as JSON Lines, sampling the service's RSS every 100 ms: time, rows, bytes, RSS before and at its peak.
 */
import pg from "pg"
import { rssMb } from "./proc.ts"
import { API, approvedCustomer, json, payoutBody, startService, stopService } from "./service.ts"

const ROWS = Number(process.env["BENCH_REPORT_ROWS"] ?? "1000000")
const databaseUrl = process.env["DATABASE_URL"] ?? ""
if (databaseUrl === "") throw new Error("DATABASE_URL names the database the service starts on")

const service = await startService({ DATABASE_URL: databaseUrl })
const created = await fetch(`${service.baseUrl}${API}/payouts`, {
  method: "POST",
  headers: { ...service.auth, ...json },
  body: payoutBody(await approvedCustomer(service))
})
if (created.status !== 201) throw new Error(`create answered ${created.status}: ${await created.text()}`)
const seed = (await created.json()) as { payoutId: string; createdAt: string }

// The copies: one per millisecond before the seed (a report covers only what was created before it is asked).
const client = new pg.Client({ connectionString: databaseUrl })
await client.connect()
const started = performance.now()
for (let from = 1; from < ROWS; from += 50_000) {
  await client.query(
    `INSERT INTO payouts
       SELECT (jsonb_populate_record(p, jsonb_build_object(
         'id', p.id || '_' || n, 'provider_transfer_id', p.provider_transfer_id || '_' || n,
         'created_at', p.created_at - n * interval '1 millisecond'))).*
       FROM payouts p, generate_series($2::int, $3::int) AS n WHERE p.id = $1`,
    [seed.payoutId, from, Math.min(from + 50_000, ROWS) - 1]
  )
}
await client.query("ANALYZE payouts")
await client.end()
console.log(`${ROWS.toLocaleString("en")} payouts in place in ${((performance.now() - started) / 1000).toFixed(0)} s`)

const range = new URLSearchParams({
  from: new Date(Date.parse(seed.createdAt) - ROWS).toISOString(),
  to: new Date(Date.parse(seed.createdAt) + 1).toISOString()
})

const measure = async (format: "csv" | "jsonl") => {
  const rssBefore = rssMb(service.pid)
  let peak = rssBefore
  const sampler = setInterval(() => (peak = Math.max(peak, rssMb(service.pid))), 100)
  const begun = performance.now()
  const answer = await fetch(`${service.baseUrl}/api/integrations/reports/payouts?${range}&format=${format}`, {
    headers: service.auth
  })
  if (answer.status !== 200 || answer.body === null) throw new Error(`report answered ${answer.status}`)
  let bytes = 0
  let lines = 0
  const reader = answer.body.getReader()
  for (let read = await reader.read(); !read.done; read = await reader.read()) {
    bytes += read.value.length
    for (const byte of read.value) if (byte === 10) lines++
  }
  clearInterval(sampler)
  const seconds = (performance.now() - begun) / 1000
  return {
    format,
    rows: format === "csv" ? lines - 1 : lines,
    MB: Math.round(bytes / 1e6),
    seconds: Number(seconds.toFixed(1)),
    "rows/s": Math.round((format === "csv" ? lines - 1 : lines) / seconds),
    "RSS before MB": rssBefore,
    "RSS peak MB": Math.max(peak, rssMb(service.pid))
  }
}

try {
  console.table([await measure("csv"), await measure("jsonl")])
} finally {
  await stopService(service.child)
}
