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
import { type LoadRequest, type LoadResult, median, runLoad } from "./load.ts"
import { startWireProxy } from "./pgwire.ts"
import { rssMb } from "./proc.ts"
import type { Service } from "./service.ts"
import { perEndpoint, type StatementCount, statementDifferences } from "./statements.ts"

const root = fileURLToPath(new URL("../..", import.meta.url))
const PAIRS = Number(process.env["BENCH_PAIRS"] ?? "3")
const SECONDS = Number(process.env["BENCH_SECONDS"] ?? "5")
/** Payouts the list limit 500 runs again at (0 skips it); seeded in bulk with SQL. */
const MILLION = Number(process.env["BENCH_MILLION"] ?? "1000000")
const CONFIRMS = Number(process.env["BENCH_CONFIRMS"] ?? "1000")
const FLOWS = Number(process.env["BENCH_FLOWS"] ?? "200")
/** Where the confirm runs' transaction hashes start: the statement count used the first few (a reused hash is a 409). */
const CONFIRM_HASHES = 1_000_000

/** What each side of the Fastify comparison does per request (baselines/fastifyPg.ts says it in full). */
const FASTIFY_LEGEND = [
  "service: the production bundle as npm start runs it (request logs, metrics and access lines on, tracing off);",
  "baseline: Fastify 5 + pg, the service's statements word for word (prepared by name, checked on the wire below),",
  "  the API key checked, hashed and cached, requests validated with Ajv against the contract's schemas, pricing with",
  "  the project's money code, rows answered as camelCase JSON, one access line; no request logs, metrics or tracing."
].join("\n")

interface Target {
  readonly name: string
  readonly baseUrl: string
  readonly pid: number
}

export type BaselineProcess = Target & { readonly child: ChildProcess }

export const startBaseline = async (script: string, env: Record<string, string>): Promise<BaselineProcess> => {
  const child = spawn(process.execPath, ["--import", "tsx", script], { cwd: root, env: { ...process.env, ...env } })
  let out = ""
  child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()))
  while (!/listening on (http:\/\/\S+)/.test(out)) {
    if (child.exitCode !== null) throw new Error(`baseline ${script} did not start:\n${out}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  return { name: script, baseUrl: /listening on (http:\/\/\S+)/.exec(out)![1]!, pid: child.pid ?? 0, child }
}

export const stopBaseline = async (baseline: BaselineProcess) => {
  baseline.child.kill("SIGTERM")
  await once(baseline.child, "exit")
}

interface Row {
  readonly workload: string
  readonly service: ReadonlyArray<LoadResult>
  readonly baseline: ReadonlyArray<LoadResult>
}

const pairs = async (
  service: Target,
  baseline: Target,
  request: LoadRequest | ((pair: number) => LoadRequest),
  baselineRequest: LoadRequest | ((pair: number) => LoadRequest),
  connections: number,
  /** A fixed number of requests per run (one-shot work such as confirming payouts), instead of SECONDS. */
  amount?: number
) => {
  const ours: Array<LoadResult> = []
  const theirs: Array<LoadResult> = []
  const options = amount === undefined ? { connections, seconds: SECONDS } : { connections, seconds: 60, amount }
  const nth = (requests: LoadRequest | ((pair: number) => LoadRequest), pair: number) =>
    typeof requests === "function" ? requests(pair) : requests
  for (let pair = 0; pair < PAIRS; pair++) {
    ours.push(await runLoad(service.baseUrl, service.pid, nth(request, pair), options))
    theirs.push(await runLoad(baseline.baseUrl, baseline.pid, nth(baselineRequest, pair), options))
  }
  return { ours, theirs }
}

/** Per pair, ours / theirs of one figure: the median and the range. */
export const pairedRatio = (
  ours: ReadonlyArray<LoadResult>,
  theirs: ReadonlyArray<LoadResult>,
  of: (result: LoadResult) => number
) => {
  const ratios = ours.map((r, i) => of(r) / of(theirs[i]!))
  return `${median(ratios).toFixed(2)}× (${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)})`
}

/** CPU milliseconds per request first (what a shared machine does not blur), req/s and latency beside it. */
const printRows = (rows: ReadonlyArray<Row>) => {
  console.table(rows.map((row) => ({
    workload: row.workload,
    "CPU ms/req service": median(row.service.map((r) => r.cpuMsPerRequest)),
    "CPU ms/req baseline": median(row.baseline.map((r) => r.cpuMsPerRequest)),
    "CPU ratio": pairedRatio(row.service, row.baseline, (r) => r.cpuMsPerRequest),
    "service req/s": median(row.service.map((r) => r.rps)),
    "baseline req/s": median(row.baseline.map((r) => r.rps)),
    "req/s ratio": pairedRatio(row.service, row.baseline, (r) => r.rps),
    "p50/p99 ms service": `${median(row.service.map((r) => r.p50))}/${median(row.service.map((r) => r.p99))}`,
    "p50/p99 ms baseline": `${median(row.baseline.map((r) => r.p50))}/${median(row.baseline.map((r) => r.p99))}`,
    "non-2xx": row.service.reduce((n, r) => n + r.non2xx + r.errors, 0)
  })))
}

/** The baseline's statements, counted on the wire as the service's were, against the service's. */
const checkSameStatements = async (
  serviceStatements: ReadonlyArray<StatementCount>,
  databaseUrl: string,
  env: Record<string, string>,
  target: { readonly auth: Record<string, string>; readonly userAddress: string }
) => {
  const proxy = await startWireProxy(databaseUrl)
  const counted = await startBaseline("scripts/bench/baselines/fastifyPg.ts", { ...env, DATABASE_URL: proxy.url })
  try {
    const theirs = await perEndpoint({ ...target, baseUrl: counted.baseUrl, replays: false }, proxy)
    const differences = statementDifferences(serviceStatements, theirs)
    console.log(
      differences.length === 0
        ? `\nthe baseline sent the service's statements, word for word, on each of ${theirs.length} endpoints (counted on the wire)`
        : `\nTHE BASELINE'S STATEMENTS DIFFER from the service's (update baselines/fastifyPg.ts):\n  ${
          differences.join("\n  ")
        }`
    )
  } finally {
    await stopBaseline(counted)
    await proxy.close()
  }
}

export const compareWithBaselines = async (
  started: Service,
  databaseUrl: string,
  /** The service's statements on the wire (statements.ts), to check the Fastify baseline's against. */
  serviceStatements?: ReadonlyArray<StatementCount>
) => {
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
    await stopBaseline(raw)
  }

  const prepared = await prepareFastify(started, databaseUrl)
  const baselineEnv = { BASELINE_TEMPLATES: JSON.stringify(prepared.templates) }
  if (serviceStatements !== undefined) {
    await checkSameStatements(serviceStatements, databaseUrl, baselineEnv, { auth, userAddress: prepared.userAddress })
  }
  const fastify = await startBaseline("scripts/bench/baselines/fastifyPg.ts", {
    ...baselineEnv,
    DATABASE_URL: databaseUrl
  })
  const list500 = new Map<number, ReadonlyArray<LoadResult>>()
  try {
    const work = fastifyWorkloads(prepared, auth)
    const rows: Array<Row> = []
    const cell = async (
      workload: string,
      ours: LoadRequest | ((pair: number) => LoadRequest),
      theirs: LoadRequest | ((pair: number) => LoadRequest) = ours,
      amount?: number
    ) => {
      const result = await pairs(service, fastify, ours, theirs, 16, amount)
      rows.push({ workload, service: result.ours, baseline: result.theirs })
      return result.ours
    }
    await cell("GET /healthz c=16 vs Fastify+pg", { path: "/healthz" })
    await cell("cached quote c=16 vs Fastify+pg", work.quote)
    await cell("POST payouts (Idempotency-Key) c=16 vs Fastify+pg", work.create("svc"), work.create("fst"))
    // Each side confirms payouts of its own, made beforehand through the service (one integration, one database).
    const perRun = CONFIRMS + 16 // autocannon prepares a request per connection ahead of stopping at `amount`
    const toConfirm = await preparedPayouts(started, perRun * PAIRS * 2)
    const confirmsOf = (side: number) => (pair: number) => {
      const run = pair * 2 + side
      return confirmRequest(started, toConfirm.slice(run * perRun, (run + 1) * perRun), CONFIRM_HASHES + run * perRun)
    }
    await cell(
      `POST payouts/{id}/confirm c=16 (${CONFIRMS} payouts per run) vs Fastify+pg`,
      confirmsOf(0),
      confirmsOf(1),
      CONFIRMS
    )
    await cell("GET payouts/{id} c=16 vs Fastify+pg", work.one(String(prepared.row["id"])))
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
      `\n## side by side with Fastify 5 + pg sending the service's statements (${PAIRS} alternating pairs of ${SECONDS} s per cell, confirm ${CONFIRMS} payouts a run; ratio = service / baseline, median of the pairs (range))`
    )
    console.log(FASTIFY_LEGEND)
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
    await stopBaseline(fastify)
  }

  console.log(`\n## service only (no baseline implements this)`)
  const flows = []
  for (let run = 0; run < PAIRS; run++) flows.push(await runPartnerFlows(started, FLOWS, 16))
  console.table([
    {
      workload: `partner flow (quote, OTP send + verify, create, confirm, get) × ${FLOWS}, 16 at a time`,
      "flows/s": median(flows.map((f) => f.flowsPerSecond)),
      "p50/p99 ms": `${median(flows.map((f) => f.p50))}/${median(flows.map((f) => f.p99))}`,
      "CPU ms per flow": median(flows.map((f) => f.cpuMsPerFlow))
    }
  ])
  console.log(`service RSS after the bench: ${rssMb(servicePid)} MB (PostgreSQL not counted)`)

  const pgbench = pgbenchCreate(databaseUrl, prepared.templates, prepared.row, SECONDS * 2)
  console.log(
    pgbench === null
      ? "\npgbench not installed: no database ceiling for the create sequence"
      : `\npgbench, the create sequence of before issue #10 (16 clients, ${
        SECONDS * 2
      } s): ${pgbench.simple} tps simple protocol, ${pgbench.prepared} tps prepared`
  )
}
