/**
 * `npx tsx scripts/bench/heapFlags.ts "<node flags>" ["<node flags>" …]`: the service under each set of node flags
 * (alternating, BENCH_PAIRS rounds), the compare workloads for BENCH_SECONDS each, then its RSS and CPU ms per request:
 * how `npm start`'s heap flags were chosen. Needs DATABASE_URL (a server; each run gets a fresh database).
 */
import pg from "pg"
import { fastifyWorkloads } from "./fastifyCells.ts"
import { runLoad } from "./load.ts"
import { rssMb } from "./proc.ts"
import { API, approvedCustomer, json, payoutBody, startService, stopService } from "./service.ts"

const SECONDS = Number(process.env["BENCH_SECONDS"] ?? "5")
const PAIRS = Number(process.env["BENCH_PAIRS"] ?? "2")
const serverUrl = process.env["DATABASE_URL"] ?? ""
if (serverUrl === "") throw new Error("DATABASE_URL names the server the runs create their databases on")

const freshDatabase = async (name: string) => {
  const admin = new pg.Client({ connectionString: serverUrl })
  await admin.connect()
  await admin.query(`DROP DATABASE IF EXISTS ${name}`)
  await admin.query(`CREATE DATABASE ${name}`)
  await admin.end()
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  return url.toString()
}

const runOnce = async (flags: string, round: number) => {
  const databaseUrl = await freshDatabase(`bench_heap_${round}`)
  const service = await startService({ DATABASE_URL: databaseUrl }, true, [
    ...flags.split(" ").filter(Boolean),
    "scripts/start.mjs"
  ])
  try {
    const userAddress = await approvedCustomer(service)
    const work = fastifyWorkloads({ userAddress }, service.auth)
    const one = await fetch(`${service.baseUrl}${API}/payouts`, {
      method: "POST",
      headers: { ...service.auth, ...json, "idempotency-key": `heap-${round}` },
      body: payoutBody(userAddress)
    }).then((r) => r.json() as Promise<{ payoutId: string }>)
    const cpu: Array<number> = []
    for (
      const request of [
        { path: "/healthz" },
        work.quote,
        work.create(`heap${round}`),
        { path: `${API}/payouts/${one.payoutId}`, headers: service.auth },
        work.list(50)
      ]
    ) {
      cpu.push(
        (await runLoad(service.baseUrl, service.pid, request, { connections: 16, seconds: SECONDS })).cpuMsPerRequest
      )
    }
    return {
      flags,
      startupMs: Math.round(service.startupMs),
      rssMb: rssMb(service.pid),
      cpuMsPerRequest: cpu.join(" / ")
    }
  } finally {
    await stopService(service.child)
  }
}

const rows = []
for (let round = 0; round < PAIRS; round++) {
  for (const [index, flags] of process.argv.slice(2).entries()) rows.push(await runOnce(flags, round * 10 + index))
}
console.log("CPU ms/request: healthz / quote / keyed create / one payout / list 50")
console.table(rows)
