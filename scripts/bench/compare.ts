/**
 * The service side by side with baselines on the same machine, in alternating runs (service, baseline, service, …)
 * so drift in the machine's load hits both: req/s, p50/p99, CPU ms per request and RSS of each server process, and
 * the ratio service / baseline (medians of the pairs).
 */
import { type ChildProcess, spawn } from "node:child_process"
import { once } from "node:events"
import { fileURLToPath } from "node:url"
import { fastifyWorkloads, pgbenchCreate, prepareFastify, SEEDED, seedPayouts } from "./fastifyCells.ts"
import { confirmRequest, preparedPayouts, runPartnerFlows } from "./flows.ts"
import { type LoadRequest, type LoadResult, runLoad } from "./load.ts"
import { rssMb } from "./proc.ts"
import type { Service } from "./service.ts"

const root = fileURLToPath(new URL("../..", import.meta.url))
const PAIRS = Number(process.env["BENCH_PAIRS"] ?? "3")
const SECONDS = Number(process.env["BENCH_SECONDS"] ?? "5")
/** Payouts the list limit 500 runs again at (0 skips it); seeded in bulk with SQL. */
const MILLION = Number(process.env["BENCH_MILLION"] ?? "1000000")
const CONFIRMS = Number(process.env["BENCH_CONFIRMS"] ?? "1000")
const FLOWS = Number(process.env["BENCH_FLOWS"] ?? "200")
/** Where the confirm runs' transaction hashes start: the statement count used the first few (a reused hash is a 409). */
const CONFIRM_HASHES = 1_000_000

interface Target {
  readonly name: string
  readonly baseUrl: string
  readonly pid: number
}

const startBaseline = async (
  script: string,
  env: Record<string, string>
): Promise<Target & { child: ChildProcess }> => {
  const child = spawn(process.execPath, ["--import", "tsx", script], { cwd: root, env: { ...process.env, ...env } })
  let out = ""
  child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()))
  while (!/listening on (http:\/\/\S+)/.test(out)) {
    if (child.exitCode !== null) throw new Error(`baseline ${script} did not start:\n${out}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  return { name: script, baseUrl: /listening on (http:\/\/\S+)/.exec(out)![1]!, pid: child.pid ?? 0, child }
}

const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0

interface Row {
  readonly workload: string
  readonly service: ReadonlyArray<LoadResult>
  readonly baseline: ReadonlyArray<LoadResult>
}

const pairs = async (
  service: Target,
  baseline: Target,
  request: LoadRequest,
  baselineRequest: LoadRequest,
  connections: number
) => {
  const ours: Array<LoadResult> = []
  const theirs: Array<LoadResult> = []
  for (let pair = 0; pair < PAIRS; pair++) {
    ours.push(await runLoad(service.baseUrl, service.pid, request, { connections, seconds: SECONDS }))
    theirs.push(await runLoad(baseline.baseUrl, baseline.pid, baselineRequest, { connections, seconds: SECONDS }))
  }
  return { ours, theirs }
}

const printRows = (rows: ReadonlyArray<Row>) => {
  console.table(rows.map((row) => {
    const rps = median(row.service.map((r) => r.rps))
    const base = median(row.baseline.map((r) => r.rps))
    return {
      workload: row.workload,
      "service req/s": rps,
      "baseline req/s": base,
      ratio: `${(rps / base).toFixed(2)}× (${
        Math.min(...row.service.map((r, i) => r.rps / row.baseline[i]!.rps)).toFixed(2)
      }–${Math.max(...row.service.map((r, i) => r.rps / row.baseline[i]!.rps)).toFixed(2)})`,
      "p50/p99 ms service": `${median(row.service.map((r) => r.p50))}/${median(row.service.map((r) => r.p99))}`,
      "p50/p99 ms baseline": `${median(row.baseline.map((r) => r.p50))}/${median(row.baseline.map((r) => r.p99))}`,
      "CPU ms/req service": median(row.service.map((r) => r.cpuMsPerRequest)),
      "CPU ms/req baseline": median(row.baseline.map((r) => r.cpuMsPerRequest)),
      "non-2xx": row.service.reduce((n, r) => n + r.non2xx + r.errors, 0)
    }
  }))
}

export const compareWithBaselines = async (started: Service, databaseUrl: string) => {
  const serviceUrl = started.baseUrl
  const servicePid = started.pid
  const service: Target = { name: "service", baseUrl: serviceUrl, pid: servicePid }
  const auth = started.auth
  const quotePath = "/api/integrations/breb/quote?destinationCop=250000"
  // The raw baseline answers the service's own bodies, byte for byte.
  const healthBody = await fetch(`${serviceUrl}/healthz`).then((r) => r.text())
  const quoteBody = await fetch(`${serviceUrl}${quotePath}`, { headers: auth }).then((r) => r.text())
  const raw = await startBaseline("scripts/bench/baselines/rawHttp.ts", {
    BASELINE_BODIES: JSON.stringify({ "/healthz": healthBody, "/api/integrations/breb/quote": quoteBody })
  })
  try {
    const rows: Array<Row> = []
    for (const connections of [16, 64]) {
      const health = await pairs(service, raw, { path: "/healthz" }, { path: "/healthz" }, connections)
      rows.push({
        workload: `GET /healthz c=${connections} vs raw node:http`,
        service: health.ours,
        baseline: health.theirs
      })
      const quote = await pairs(service, raw, { path: quotePath, headers: auth }, { path: quotePath }, connections)
      rows.push({
        workload: `cached quote c=${connections} vs raw node:http`,
        service: quote.ours,
        baseline: quote.theirs
      })
    }
    console.log(
      `\n## side by side with raw node:http (${PAIRS} alternating pairs of ${SECONDS} s per cell; ratio = service / baseline, median (range))`
    )
    printRows(rows)
  } finally {
    raw.child.kill("SIGTERM")
    await once(raw.child, "exit")
  }

  const prepared = await prepareFastify(started, databaseUrl)
  const fastify = await startBaseline("scripts/bench/baselines/fastifyPg.ts", {
    DATABASE_URL: databaseUrl,
    BASELINE_TEMPLATES: JSON.stringify(prepared.templates)
  })
  const list500 = new Map<number, ReadonlyArray<LoadResult>>()
  try {
    const work = fastifyWorkloads(prepared, auth)
    const rows: Array<Row> = []
    const cell = async (workload: string, ours: LoadRequest, theirs: LoadRequest = ours) => {
      const result = await pairs(service, fastify, ours, theirs, 16)
      rows.push({ workload, service: result.ours, baseline: result.theirs })
      return result.ours
    }
    await cell("GET /healthz c=16 vs Fastify+pg", { path: "/healthz" })
    await cell("cached quote c=16 vs Fastify+pg", work.quote)
    await cell("POST payouts (Idempotency-Key) c=16 vs Fastify+pg", work.create("svc"), work.create("fst"))
    await cell("GET payouts?limit=50 c=16 vs Fastify+pg", work.list(50))
    await seedPayouts(databaseUrl, prepared.row, SEEDED)
    list500.set(
      SEEDED,
      await cell(`GET payouts?limit=500 at ${SEEDED.toLocaleString("en")}+ payouts c=16 vs Fastify+pg`, work.list(500))
    )
    if (MILLION > SEEDED) {
      const seeding = performance.now()
      await seedPayouts(databaseUrl, prepared.row, MILLION - SEEDED, SEEDED)
      console.log(
        `\n(seeded ${(MILLION - SEEDED).toLocaleString("en")} more payouts with SQL in ${
          Math.round((performance.now() - seeding) / 1000)
        } s)`
      )
      list500.set(
        MILLION,
        await cell(
          `GET payouts?limit=500 at ${MILLION.toLocaleString("en")}+ payouts c=16 vs Fastify+pg`,
          work.list(500)
        )
      )
    }
    console.log(
      `\n## side by side with Fastify 5 + pg doing the same work (key, validation, pricing, access line) and sending the pre-#10 statements (${PAIRS} alternating pairs of ${SECONDS} s per cell)`
    )
    printRows(rows)
    const [small, large] = [list500.get(SEEDED), list500.get(MILLION)]
    if (small !== undefined && large !== undefined) {
      const p99 = (runs: ReadonlyArray<LoadResult>) => median(runs.map((r) => r.p99))
      console.log(
        `list limit 500, service p99: ${p99(small)} ms at ${SEEDED.toLocaleString("en")}, ${p99(large)} ms at ${
          MILLION.toLocaleString("en")
        } (${(p99(large) / p99(small)).toFixed(2)}×)`
      )
    }
    console.log(`RSS after these runs: service ${rssMb(servicePid)} MB, Fastify+pg ${rssMb(fastify.pid)} MB`)
    const failed = rows.flatMap((row) => [...row.service, ...row.baseline]).reduce((n, r) => n + r.non2xx + r.errors, 0)
    if (failed > 0) {
      throw new Error(`${failed} requests were not answered 2xx: the figures above do not measure the workloads`)
    }
  } finally {
    fastify.child.kill("SIGTERM")
    await once(fastify.child, "exit")
  }

  console.log(`\n## service only (no baseline implements these)`)
  // autocannon prepares a request per connection ahead of stopping at `amount`: a spare payout for each.
  const perRun = CONFIRMS + 16
  const toConfirm = await preparedPayouts(started, perRun * PAIRS)
  const confirms: Array<LoadResult> = []
  for (let run = 0; run < PAIRS; run++) {
    const ids = toConfirm.slice(run * perRun, (run + 1) * perRun)
    confirms.push(
      await runLoad(serviceUrl, servicePid, confirmRequest(started, ids, CONFIRM_HASHES + run * perRun), {
        connections: 16,
        seconds: 20,
        amount: CONFIRMS
      })
    )
  }
  const flows = []
  for (let run = 0; run < PAIRS; run++) flows.push(await runPartnerFlows(started, FLOWS, 16))
  console.table([
    {
      workload: `POST payouts/{id}/confirm c=16 (${CONFIRMS} payouts per run)`,
      "req/s": median(confirms.map((r) => r.rps)),
      "p50/p99 ms": `${median(confirms.map((r) => r.p50))}/${median(confirms.map((r) => r.p99))}`,
      "CPU ms per request": median(confirms.map((r) => r.cpuMsPerRequest)),
      "non-2xx": confirms.reduce((n, r) => n + r.non2xx + r.errors, 0)
    },
    {
      workload: `partner flow (quote, OTP send + verify, create, confirm, get) × ${FLOWS}, 16 at a time`,
      "req/s": `${median(flows.map((f) => f.flowsPerSecond))} flows/s`,
      "p50/p99 ms": `${median(flows.map((f) => f.p50))}/${median(flows.map((f) => f.p99))}`,
      "CPU ms per request": `${median(flows.map((f) => f.cpuMsPerFlow))} per flow`,
      "non-2xx": 0
    }
  ])
  console.log(`service RSS after the bench: ${rssMb(servicePid)} MB (PostgreSQL not counted)`)
  const unconfirmed = confirms.reduce((n, r) => n + r.non2xx + r.errors, 0)
  if (unconfirmed > 0) {
    throw new Error(`${unconfirmed} confirms were not answered 2xx: the confirm figures do not measure confirming`)
  }

  const pgbench = pgbenchCreate(databaseUrl, prepared.templates, prepared.row, SECONDS * 2)
  console.log(
    pgbench === null
      ? "\npgbench not installed: no database ceiling for the create sequence"
      : `\npgbench, the baseline's create sequence (16 clients, ${
        SECONDS * 2
      } s): ${pgbench.simple} tps simple protocol, ${pgbench.prepared} tps prepared`
  )
}
