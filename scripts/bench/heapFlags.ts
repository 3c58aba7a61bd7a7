/**
 * `npx tsx scripts/bench/heapFlags.ts "<node flags>" ["<node flags>" …]`: the service under each set of node flags
 * (alternating, BENCH_PAIRS rounds), the compare workloads for BENCH_SECONDS each, then its RSS and CPU ms per request:
 * how `npm start`'s heap flags were chosen. A word `NAME=value` among the flags is set in the service's environment
 * instead (`MALLOC_ARENA_MAX=2 --max-semi-space-size=16`). Needs DATABASE_URL (a server; each run gets a fresh
 * database).
 */
import { createDatabase, workloadsFor } from "./compareRefs.ts"
import { runLoad } from "./load.ts"
import { rssMb } from "./proc.ts"
import { startService, stopService } from "./service.ts"

const SECONDS = Number(process.env["BENCH_SECONDS"] ?? "5")
const PAIRS = Number(process.env["BENCH_PAIRS"] ?? "2")
const serverUrl = process.env["DATABASE_URL"] ?? ""
if (serverUrl === "") throw new Error("DATABASE_URL names the server the runs create their databases on")

const runOnce = async (flags: string, round: number) => {
  const databaseUrl = await createDatabase(serverUrl, `bench_heap_${round}`)
  const words = flags.split(" ").filter(Boolean)
  const isEnv = (word: string) => /^[A-Z_][A-Z0-9_]*=/.test(word)
  const env = Object.fromEntries(
    words.filter(isEnv).map((word) => [word.split("=")[0]!, word.slice(word.indexOf("=") + 1)])
  )
  const service = await startService({ ...env, DATABASE_URL: databaseUrl }, true, [
    ...words.filter((word) => !isEnv(word)),
    "scripts/start.mjs"
  ])
  try {
    const workloads = await workloadsFor(service, { payout: `heap-${round}`, creates: `heap${round}` })
    const cpu: Array<number> = []
    for (const { request } of workloads) {
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
