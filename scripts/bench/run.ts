/**
 * `npm run bench`: start-up time to first 200, request latency and throughput, and server memory, against
 * a real server process over loopback HTTP. Uses DATABASE_URL (or TEST_DATABASE_URL, in a fresh database)
 * when set, else the embedded PostgreSQL (a fresh data directory). Bounded: fixed request counts, every loop ends by itself.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { once } from "node:events"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { generatePrivateKey, privateKeyToAddress } from "viem/accounts"

const root = fileURLToPath(new URL("../..", import.meta.url))
const REQUESTS = Number(process.env["BENCH_REQUESTS"] ?? "400")
const CONCURRENCY = Number(process.env["BENCH_CONCURRENCY"] ?? "16")

interface Service {
  readonly child: ChildProcess
  readonly baseUrl: string
  readonly key: string
  readonly startupMs: number
}

const startService = async (env: Record<string, string>): Promise<Service> => {
  const started = performance.now()
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
    cwd: root,
    env: { ...process.env, PORT: "0", LOG_LEVEL: "warn", RATE_LIMIT_PER_SECOND: "100000", RATE_LIMIT_BURST: "100000", ...env }
  })
  let out = ""
  child.stdout!.on("data", (chunk: Buffer) => (out += chunk.toString()))
  child.stderr!.on("data", (chunk: Buffer) => (out += chunk.toString()))
  const deadline = Date.now() + 60_000
  let baseUrl: string | undefined
  while (Date.now() < deadline) {
    baseUrl ??= /listening on (http:\/\/\S+)/.exec(out)?.[1]
    if (baseUrl !== undefined) {
      const ok = await fetch(`${baseUrl}/healthz`).then((r) => r.status === 200, () => false)
      if (ok) break
    }
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  const startupMs = performance.now() - started
  const key = /(cop_test_pk_[0-9A-Za-z]+)/.exec(out)?.[1]
  if (baseUrl === undefined || key === undefined) throw new Error(`service did not start:\n${out}`)
  return { child, baseUrl, key, startupMs }
}

const stop = async (child: ChildProcess) => {
  const exited = once(child, "exit")
  child.kill("SIGTERM")
  await exited
}

const rssMb = (pid: number): number => {
  const status = readFileSync(`/proc/${pid}/status`, "utf8")
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? "0")
  return Math.round(kb / 1024)
}

/** The service is the spawned node process itself (`node --import tsx`, as `npm start` runs it). */
const servicePid = (child: ChildProcess): number => child.pid ?? 0

const percentile = (sorted: ReadonlyArray<number>, p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0

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

const json = { "content-type": "application/json" }

const approvedCustomer = async (service: Service, auth: Record<string, string>) => {
  const userAddress = privateKeyToAddress(generatePrivateKey())
  const api = `${service.baseUrl}/api/integrations/breb`
  const sent = await fetch(`${api}/kyc/otp/send`, {
    method: "POST",
    headers: { ...auth, ...json },
    body: JSON.stringify({ email: "bench@example.com", userAddress })
  }).then((r) => r.json() as Promise<{ debugCode: string }>)
  await fetch(`${api}/kyc/otp/verify`, {
    method: "POST",
    headers: { ...auth, ...json },
    body: JSON.stringify({ userAddress, code: sent.debugCode })
  })
  return userAddress
}

const bench = async (label: string, env: Record<string, string>) => {
  const service = await startService(env)
  const pid = servicePid(service.child)
  const auth = { authorization: `Bearer ${service.key}` }
  const api = `${service.baseUrl}/api/integrations/breb`
  const idleRss = rssMb(pid)
  const userAddress = await approvedCustomer(service, auth)
  const results = [
    await load("GET /healthz", REQUESTS, () => fetch(`${service.baseUrl}/healthz`)),
    await load("GET quote?destinationCop", REQUESTS, () => fetch(`${api}/quote?destinationCop=250000`, { headers: auth })),
    await load("POST payouts", REQUESTS, (i) =>
      fetch(`${api}/payouts`, {
        method: "POST",
        headers: { ...auth, ...json, "idempotency-key": `bench-${i}` },
        body: JSON.stringify({ userAddress, destinationCop: "250000", breBKey: "@bench", accountOwnerName: "Bench" })
      })),
    await load("GET payouts?limit=50", REQUESTS, () => fetch(`${api}/payouts?limit=50`, { headers: auth }))
  ]
  const loadedRss = rssMb(pid)
  await stop(service.child)
  console.log(`\n## ${label}`)
  console.log(`start-up to first 200 on /healthz: ${Math.round(service.startupMs)} ms (node --import tsx + database + migrations + listen)`)
  console.log(`server RSS: ${idleRss} MB idle, ${loadedRss} MB after load (${REQUESTS} requests × 4, concurrency ${CONCURRENCY})`)
  console.table(results)
}

const databaseUrl = process.env["DATABASE_URL"]
console.log(`bench: ${REQUESTS} requests per endpoint, concurrency ${CONCURRENCY}, ${process.version}`)
const embeddedDir = mkdtempSync(join(tmpdir(), "bench-embedded-"))
await bench("embedded PostgreSQL (fresh data directory)", { EMBEDDED_DATA_DIR: join(embeddedDir, "data"), DATABASE_URL: "" })
rmSync(embeddedDir, { recursive: true, force: true })
if (databaseUrl !== undefined && databaseUrl !== "") {
  await bench(`PostgreSQL (${new URL(databaseUrl).host})`, { DATABASE_URL: databaseUrl })
} else {
  console.log("\n(set DATABASE_URL to an empty PostgreSQL database to also measure a real server)")
}
