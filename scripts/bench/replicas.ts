/**
 * `npm run bench -- --replicas 1,2,3`: how keyed-create throughput grows with replicas on one PostgreSQL, and what
 * stops it. For each count, that many services (as `npm start` runs them) share one fresh database; a closed loop of
 * keyed creates is spread over them (BENCH_CONCURRENCY connections in all, BENCH_SECONDS long). Printed per count:
 * creates/s, latency, CPU per create of the replicas, of PostgreSQL and of the load generator, how busy the machine
 * was, what PostgreSQL's active backends waited on (sampled from pg_stat_activity), and how many requests waited for
 * a pool connection (sampled from each replica's /metrics).
 */
import { readdirSync, readFileSync } from "node:fs"
import { cpus } from "node:os"
import pg from "pg"
import { createDatabase } from "./compareRefs.ts"
import { percentile, runLoad } from "./load.ts"
import { cpuMs } from "./proc.ts"
import { API, approvedCustomer, json, payoutBody, type Service, startService, stopService } from "./service.ts"

const SECONDS = Number(process.env["BENCH_SECONDS"] ?? "20")
const CONNECTIONS = Number(process.env["BENCH_CONCURRENCY"] ?? "32")
const WARM_UP_SECONDS = 3
const SAMPLE_EVERY_MS = 250

/** Busy and total jiffies of the whole machine (the first line of /proc/stat). */
const machineJiffies = () => {
  const fields = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number)
  const idle = fields[3]! + fields[4]!
  const total = fields.reduce((sum, value) => sum + value, 0)
  return { busy: total - idle, total }
}

/** CPU milliseconds of every process named postgres (the server the replicas share: on this machine, the only one). */
const postgresCpuMs = () =>
  readdirSync("/proc").filter((name) => /^\d+$/.test(name)).reduce((sum, pid) => {
    try {
      if (!/^Name:\s+postgres/m.test(readFileSync(`/proc/${pid}/status`, "utf8"))) return sum
      return sum + cpuMs(Number(pid))
    } catch {
      return sum // exited meanwhile
    }
  }, 0)

const metricsUrlOf = (service: Service) => /metrics: (http:\/\/\S+)/.exec(service.output())?.[1]

/** The sum of a metric's samples in a Prometheus text page (0 when absent). */
const sampleSum = (page: string, name: string) =>
  page.split("\n").filter((line) => line.startsWith(`${name} `) || line.startsWith(`${name}{`))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(" ") + 1)), 0)

interface Samples {
  readonly waits: Map<string, number>
  poolWaiting: number
  count: number
}

/** Samples PostgreSQL's active backends by wait and the replicas' pool queues until `stop` is set. */
const sample = async (databaseUrl: string, replicas: ReadonlyArray<Service>, stop: { done: boolean }) => {
  const client = new pg.Client({ connectionString: databaseUrl })
  await client.connect()
  const samples: Samples = { waits: new Map(), poolWaiting: 0, count: 0 }
  try {
    while (!stop.done) {
      const { rows } = await client.query<{ wait: string; n: string }>(
        `SELECT coalesce(wait_event_type || ':' || wait_event, 'on CPU') AS wait, count(*) AS n FROM pg_stat_activity
         WHERE state = 'active' AND datname = current_database() AND pid <> pg_backend_pid() GROUP BY 1`
      )
      for (const { n, wait } of rows) samples.waits.set(wait, (samples.waits.get(wait) ?? 0) + Number(n))
      for (const replica of replicas) {
        const url = metricsUrlOf(replica)
        if (url === undefined) continue
        const page = await fetch(url).then((r) => r.text(), () => "")
        samples.poolWaiting += sampleSum(page, "cop_db_pool_waiting_requests")
      }
      samples.count++
      await new Promise((resolve) => setTimeout(resolve, SAMPLE_EVERY_MS))
    }
  } finally {
    await client.end()
  }
  return samples
}

const createRequest = (service: Service, userAddress: string, run: string) => ({
  path: `${API}/payouts`,
  method: "POST" as const,
  headers: { ...service.auth, ...json },
  body: (i: number) => ({ body: payoutBody(userAddress), headers: { "idempotency-key": `${run}-${i}` } })
})

/** `count` replicas on `databaseUrl`, the first printing the key every one uses. */
const startReplicas = async (databaseUrl: string, count: number) => {
  const env = { DATABASE_URL: databaseUrl, ADMIN_PORT: "0" }
  const first = await startService(env, false)
  const rest = await Promise.all(Array.from({ length: count - 1 }, () => startService(env, false)))
  return [first, ...rest]
}

const measure = async (serverUrl: string, count: number, key: string) => {
  const databaseUrl = await createDatabase(serverUrl, `bench_replicas_${count}`)
  // The first start on an empty database prints the demo key; every replica then shares that integration.
  const keyed = await startService({ DATABASE_URL: databaseUrl }, true)
  await stopService(keyed.child)
  const replicas = (await startReplicas(databaseUrl, count)).map((service) => ({
    ...service,
    key: keyed.key,
    auth: { authorization: `Bearer ${keyed.key}` }
  }))
  try {
    const userAddress = await approvedCustomer(replicas[0]!)
    const perReplica = Math.max(1, Math.round(CONNECTIONS / count))
    await Promise.all(
      replicas.map((service, r) =>
        runLoad(service.baseUrl, service.pid, createRequest(service, userAddress, `${key}-warm-${r}`), {
          connections: perReplica,
          seconds: WARM_UP_SECONDS
        })
      )
    )
    const stop = { done: false }
    const sampling = sample(databaseUrl, replicas, stop)
    const before = {
      replicas: replicas.reduce((sum, service) => sum + cpuMs(service.pid), 0),
      postgres: postgresCpuMs(),
      generator: process.cpuUsage(),
      machine: machineJiffies()
    }
    const results = await Promise.all(
      replicas.map((service, r) =>
        runLoad(service.baseUrl, service.pid, createRequest(service, userAddress, `${key}-${r}`), {
          connections: perReplica,
          seconds: SECONDS
        })
      )
    )
    stop.done = true
    const samples = await sampling
    const generator = process.cpuUsage(before.generator)
    const machine = machineJiffies()
    const creates = results.reduce((sum, result) => sum + result.rps, 0) * SECONDS
    const perCreate = (ms: number) => (ms / creates).toFixed(2)
    const waits = [...samples.waits].sort(([, a], [, b]) => b - a)
      .map(([wait, n]) => `${wait} ${(n / samples.count).toFixed(1)}`).join(", ")
    return {
      replicas: count,
      "creates/s": results.reduce((sum, result) => sum + result.rps, 0),
      "p50 ms": percentile(results.map((result) => result.p50).sort((a, b) => a - b), 0.5),
      "p99 ms (worst)": Math.max(...results.map((result) => result.p99)),
      "non-2xx": results.reduce((sum, result) => sum + result.non2xx + result.errors, 0),
      "replicas CPU ms/create": perCreate(
        replicas.reduce((sum, service) => sum + cpuMs(service.pid), 0) -
          before.replicas
      ),
      "PostgreSQL CPU ms/create": perCreate(postgresCpuMs() - before.postgres),
      "load generator CPU ms/create": perCreate((generator.user + generator.system) / 1000),
      "machine busy %": Math.round(
        ((machine.busy - before.machine.busy) / (machine.total - before.machine.total)) * 100
      ),
      "avg pool waiting": (samples.poolWaiting / samples.count).toFixed(1),
      "PostgreSQL active backends by wait (avg)": waits
    }
  } finally {
    await Promise.all(replicas.map((service) => stopService(service.child)))
  }
}

/** Runs every count in `counts` on fresh databases of the server at `serverUrl`; prints one row per count. */
export const runReplicas = async (serverUrl: string, counts: ReadonlyArray<number>) => {
  console.log(
    `bench --replicas: keyed creates, ${CONNECTIONS} connections in all, ${SECONDS} s per count, ` +
      `${cpus().length} cores, ${process.version}`
  )
  const key = Date.now().toString(36)
  const rows = []
  for (const count of counts) {
    const row = await measure(serverUrl, count, key)
    console.log(JSON.stringify(row))
    rows.push(row)
  }
  console.table(rows)
}
