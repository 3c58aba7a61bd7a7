/**
 * `DATABASE_URL=… npx tsx scripts/bench/floor.ts`: how much of a light request's CPU is the stack's own. `GET /healthz`
 * on three servers, in alternating rounds: raw `node:http` (baselines/rawHttp.ts), the design card's stack with
 * nothing on it (baselines/bareEffect.ts: Effect's HttpApi, one endpoint, no middleware or services), and the service
 * as `npm start` runs it. BENCH_ROUNDS rounds (default 3) of BENCH_SECONDS (default 8) at 16 connections.
 */
import { startBaseline, stopBaseline } from "./compare.ts"
import { type LoadResult, median, runLoad } from "./load.ts"
import { startService, stopService } from "./service.ts"

const ROUNDS = Number(process.env["BENCH_ROUNDS"] ?? "3")
const SECONDS = Number(process.env["BENCH_SECONDS"] ?? "8")
const databaseUrl = process.env["DATABASE_URL"] ?? ""
if (databaseUrl === "") throw new Error("DATABASE_URL names the database the service starts on")

const service = await startService({ DATABASE_URL: databaseUrl }, false)
const health = await fetch(`${service.baseUrl}/healthz`).then((response) => response.text())
const raw = await startBaseline("scripts/bench/baselines/rawHttp.ts", {
  BASELINE_BODIES: JSON.stringify({ "/healthz": health })
})
const bare = await startBaseline("scripts/bench/baselines/bareEffect.ts", {})
const servers = [
  { name: "raw node:http", baseUrl: raw.baseUrl, pid: raw.pid },
  { name: "Effect HttpApi, one endpoint, nothing else", baseUrl: bare.baseUrl, pid: bare.pid },
  { name: "the service (npm start)", baseUrl: service.baseUrl, pid: service.pid }
]

const results = servers.map((): Array<LoadResult> => [])
try {
  for (let round = 0; round < ROUNDS; round++) {
    for (const [index, server] of servers.entries()) {
      results[index]!.push(
        await runLoad(server.baseUrl, server.pid, { path: "/healthz" }, {
          connections: 16,
          seconds: SECONDS
        })
      )
    }
  }
} finally {
  await stopBaseline(raw)
  await stopBaseline(bare)
  await stopService(service.child)
}

const rawCpu = median(results[0]!.map((result) => result.cpuUsPerRequest))
console.log(`GET /healthz, ${ROUNDS} alternating rounds of ${SECONDS} s, 16 connections; median of the rounds`)
console.table(results.map((runs, index) => {
  const cpu = median(runs.map((result) => result.cpuUsPerRequest))
  return {
    server: servers[index]!.name,
    "CPU µs/req": Math.round(cpu),
    "× raw node:http": (cpu / rawCpu).toFixed(1),
    "req/s": median(runs.map((result) => result.rps)),
    non2xx: runs.reduce((sum, result) => sum + result.non2xx + result.errors, 0)
  }
}))
