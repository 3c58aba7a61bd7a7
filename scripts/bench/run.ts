/**
 * `npm run bench`: start-up time to first 200, request latency and throughput, and server memory, against
 * a real server process over loopback HTTP, side by side with baselines (compare.ts). Uses DATABASE_URL (an empty
 * database) when set, else a throw-away embedded PostgreSQL. Bounded: fixed request counts or durations, every loop
 * ends by itself.
 */
import { spawn } from "node:child_process"
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { startThrowawayPostgres } from "../../src/db/EmbeddedPostgres.ts"
import { compareWithBaselines } from "./compare.ts"
import { compareWithRef } from "./compareRefs.ts"
import { percentile } from "./load.ts"
import { runOverload } from "./overload.ts"
import { runReplicas } from "./replicas.ts"
import {
  approvedCustomer,
  json,
  npmStartArgs,
  npmStartEnv,
  payoutBody,
  root,
  startService,
  stopService
} from "./service.ts"
import { countStatements } from "./statements.ts"
import { rssMb } from "./proc.ts"

const REQUESTS = Number(process.env["BENCH_REQUESTS"] ?? "400")
const CONCURRENCY = Number(process.env["BENCH_CONCURRENCY"] ?? "16")

const load = async (name: string, count: number, request: (i: number) => Promise<Response>) => {
  const latencies: Array<number> = []
  let next = 0
  let failures = 0
  const started = performance.now()
  const worker = async () => {
    while (next < count) {
      const i = next++
      const t0 = performance.now()
      const response = await request(i)
      await response.arrayBuffer()
      latencies.push(performance.now() - t0)
      if (response.status >= 300) failures++
    }
  }
  await Promise.all(Array.from({ length: CONCURRENCY }, worker))
  const seconds = (performance.now() - started) / 1000
  latencies.sort((a, b) => a - b)
  return {
    name,
    requests: count,
    failures,
    rps: Math.round(count / seconds),
    p50: percentile(latencies, 0.5).toFixed(1),
    p95: percentile(latencies, 0.95).toFixed(1),
    p99: percentile(latencies, 0.99).toFixed(1)
  }
}

/** Resident memory of the embedded PostgreSQL: every process whose command line names its data directory. */
const postgresRssMb = (dataDir: string | undefined): number | undefined => {
  if (dataDir === undefined) return undefined
  let kb = 0
  for (const pid of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    const cmdline = readFileOrEmpty(`/proc/${pid}/cmdline`)
    const parent = readFileOrEmpty(`/proc/${pid}/status`)
    if (cmdline.includes(dataDir) || isChildOfPostmaster(parent, dataDir)) {
      kb += Number(/VmRSS:\s+(\d+)/.exec(parent)?.[1] ?? "0")
    }
  }
  return Math.round(kb / 1024)
}

const readFileOrEmpty = (path: string) => {
  try {
    return readFileSync(path, "utf8")
  } catch {
    return ""
  }
}

/** PostgreSQL's backends show the postmaster's pid as their parent, not the data directory. */
const isChildOfPostmaster = (status: string, dataDir: string) => {
  const ppid = /PPid:\s+(\d+)/.exec(status)?.[1]
  return ppid !== undefined && readFileOrEmpty(`/proc/${ppid}/cmdline`).includes(dataDir) &&
    /^Name:\s+postgres/m.test(status)
}

const bench = async (label: string, env: Record<string, string>) => {
  const service = await startService(env)
  const pid = service.pid
  const auth = service.auth
  const api = `${service.baseUrl}/api/integrations/breb`
  const idleRss = rssMb(pid)
  const idlePostgres = postgresRssMb(env["EMBEDDED_DATA_DIR"])
  const userAddress = await approvedCustomer(service)
  const results = [
    await load("GET /healthz", REQUESTS, () => fetch(`${service.baseUrl}/healthz`)),
    await load(
      "GET quote?destinationCop",
      REQUESTS,
      () => fetch(`${api}/quote?destinationCop=250000`, { headers: auth })
    ),
    await load("POST payouts", REQUESTS, (i) =>
      fetch(`${api}/payouts`, {
        method: "POST",
        headers: { ...auth, ...json, "idempotency-key": `bench-${i}` },
        body: payoutBody(userAddress)
      })),
    await load("GET payouts?limit=50", REQUESTS, () => fetch(`${api}/payouts?limit=50`, { headers: auth }))
  ]
  const loadedRss = rssMb(pid)
  const loadedPostgres = postgresRssMb(env["EMBEDDED_DATA_DIR"])
  await stopService(service.child)
  console.log(`\n## ${label}`)
  console.log(
    `start-up to first 200 on /healthz: ${
      Math.round(service.startupMs)
    } ms (npm start's node command: bundle + database + migrations + listen)`
  )
  console.log(
    `server RSS: ${idleRss} MB idle, ${loadedRss} MB after load (${REQUESTS} requests × 4, concurrency ${CONCURRENCY})`
  )
  if (idlePostgres !== undefined) {
    console.log(`embedded PostgreSQL RSS (all its processes): ${idlePostgres} MB idle, ${loadedPostgres} MB after load`)
  }
  console.table(results)
}

/** `npm start` a second time on the same data directory: the cluster exists, only the server starts. */
const restart = async (env: Record<string, string>) => {
  const started = performance.now()
  const child = spawn(process.execPath, npmStartArgs(), {
    cwd: root,
    env: { ...process.env, ...npmStartEnv(), PORT: "0", LOG_LEVEL: "warn", ...env }
  })
  let out = ""
  child.stdout?.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")))
  child.stderr?.on("data", (chunk: Buffer) => (out += chunk.toString("utf8")))
  while (!/listening on http/.test(out)) {
    if (child.exitCode !== null) throw new Error(`restart failed:\n${out}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  const ms = performance.now() - started
  await stopService(child)
  console.log(`\nrestart on the same data directory, to the banner: ${Math.round(ms)} ms`)
}

// DATABASE_URL (an empty database the bench may fill), else a throw-away embedded PostgreSQL cluster.
const given = process.env["DATABASE_URL"] ?? ""
const database = given !== "" ? { url: given, stop: async () => {} } : await startThrowawayPostgres({ durable: true })
console.log(
  `bench database: ${
    given !== "" ? "DATABASE_URL" : "a throw-away embedded PostgreSQL (durable: fsync on)"
  }; ${process.version}`
)
if (process.argv.includes("--overload")) {
  const survived = await runOverload(database.url).finally(() => database.stop())
  process.exit(survived ? 0 : 1)
}
const replicasAt = process.argv.indexOf("--replicas")
if (replicasAt !== -1) {
  const counts = (process.argv[replicasAt + 1] ?? "1,2,3").split(",").map(Number)
  if (counts.some((count) => !Number.isInteger(count) || count < 1)) {
    throw new Error("--replicas takes counts, e.g. 1,2,3")
  }
  await runReplicas(database.url, counts).finally(() => database.stop())
  process.exit(0)
}
const compareAt = process.argv.indexOf("--compare")
if (compareAt !== -1) {
  const ref = process.argv[compareAt + 1]
  if (ref === undefined || ref.startsWith("-")) throw new Error("--compare needs a git ref, e.g. --compare main")
  // `--env KEY=VALUE` (repeatable): set for the working tree's service only, e.g. to measure tracing against none.
  const workEnv: Record<string, string> = {}
  process.argv.forEach((arg, at) => {
    if (arg !== "--env") return
    const pair = process.argv[at + 1] ?? ""
    const eq = pair.indexOf("=")
    if (eq <= 0) throw new Error("--env needs KEY=VALUE, e.g. --env OTEL_TRACES_SAMPLER_ARG=0.1")
    workEnv[pair.slice(0, eq)] = pair.slice(eq + 1)
  })
  try {
    await compareWithRef(ref, database.url, workEnv, { withBaseline: process.argv.includes("--with-baseline") })
  } finally {
    await database.stop()
  }
  process.exit(0)
}
try {
  // First on the empty database: statements per request (it prints the demo key, which the next start reuses).
  const counted = await countStatements(database.url, { showSql: process.env["BENCH_SHOW_SQL"] === "1" })
  const started = await startService({ DATABASE_URL: database.url }, false)
  const service = { ...started, key: counted.key, auth: { authorization: `Bearer ${counted.key}` } }
  try {
    await compareWithBaselines(service, database.url, counted.rows)
  } finally {
    await stopService(service.child)
  }
} finally {
  await database.stop()
}
console.log(`\nbench: ${REQUESTS} requests per endpoint, concurrency ${CONCURRENCY}`)
const embeddedDir = mkdtempSync(join(tmpdir(), "bench-embedded-"))
chmodSync(embeddedDir, 0o755) // as root, PostgreSQL runs as the unprivileged 'postgres' user, who must reach it
const embeddedEnv = { EMBEDDED_DATA_DIR: join(embeddedDir, "data"), DATABASE_URL: "" }
await bench("embedded PostgreSQL (fresh data directory)", embeddedEnv)
await restart(embeddedEnv)
rmSync(embeddedDir, { recursive: true, force: true })
