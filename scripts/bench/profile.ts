/**
 * `npx tsx scripts/bench/profile.ts <workload>`: where the service's CPU goes under load. Runs the service from its
 * TypeScript sources (so every frame keeps its package's path) with `node --cpu-prof`, puts one workload under
 * autocannon load for BENCH_SECONDS (default 8), stops it and sums the profile's self time by category (Effect
 * runtime, Schema, platform HTTP, logging, pg driver, node internals, GC, ...). Loopback only; DATABASE_URL must name
 * an empty or bench-owned PostgreSQL database. Workloads: healthz, quote, create, one (GET one payout), list50, list500.
 */
import { execFileSync } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { runLoad, type LoadRequest } from "./load.ts"
import { workloadsFor } from "./compareRefs.ts"
import { fastifyWorkloads } from "./fastifyCells.ts"
import { API, approvedCustomer, root, type Service, startService, stopService } from "./service.ts"

interface ProfileNode {
  readonly id: number
  readonly callFrame: { readonly functionName: string; readonly url: string }
}
interface CpuProfile {
  readonly nodes: ReadonlyArray<ProfileNode>
  readonly samples: ReadonlyArray<number>
  readonly timeDeltas: ReadonlyArray<number>
}

const categories: ReadonlyArray<readonly [string, (url: string, fn: string) => boolean]> = [
  ["GC", (_, fn) => fn === "(garbage collector)"],
  ["idle", (_, fn) => fn === "(idle)" || fn === "(program)"],
  [
    "Schema (decode/encode)",
    (url) => /effect\/dist\/\w+\/(Schema|ParseResult|SchemaAST|JSONSchema|Arbitrary|Pretty)\.js/.test(url)
  ],
  [
    "logging",
    (url) => /effect\/dist\/\w+\/internal\/logger|effect\/dist\/\w+\/Logger\.js|internal\/console|Logging\.ts/.test(url)
  ],
  ["tracing", (url) => /effect\/dist\/\w+\/internal\/(tracer|metric)/.test(url)],
  ["Effect runtime", (url) => /node_modules\/effect\//.test(url)],
  ["@effect/platform HTTP", (url) => /@effect\/platform/.test(url)],
  [
    "@effect/sql + pg driver",
    (url) => /node_modules\/(@effect\/sql|pg|pg-protocol|pg-pool|pg-types|postgres-)/.test(url)
  ],
  ["service code (src/, contracts/)", (url) => /\/(src|contracts)\//.test(url) && !url.includes("node_modules")],
  ["other packages", (url) => url.includes("node_modules")],
  ["node internals (http, net, streams)", (url) => url.startsWith("node:")],
  ["native / other", () => true]
]

const TOP = Number(process.env["BENCH_TOP"] ?? "0")

const selfTimes = (profile: CpuProfile, keyOf: (frame: ProfileNode["callFrame"]) => string) => {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  const totals = new Map<string, number>()
  profile.samples.forEach((id, i) => {
    const key = keyOf(byId.get(id)!.callFrame)
    totals.set(key, (totals.get(key) ?? 0) + (profile.timeDeltas[i] ?? 0))
  })
  return totals
}

/** The functions with the most self time, idle excluded. */
const topFunctions = (profile: CpuProfile) =>
  [...selfTimes(
    profile,
    (frame) =>
      `${frame.functionName || "(anonymous)"} ${
        frame.url.replace(/^.*node_modules\//, "").replace(/^file:\/\/.*\/(src|contracts)\//, "$1/")
      }`
  )]
    .filter(([name]) => !name.startsWith("(idle)") && !name.startsWith("(program)"))
    .sort((a, b) => b[1] - a[1])
    .slice(0, TOP)
    .map(([where, us]) => ({ where, "self ms": Math.round(us / 1000) }))

const categorize = (profile: CpuProfile) => {
  const totals = selfTimes(
    profile,
    (frame) => categories.find(([, matches]) => matches(frame.url, frame.functionName))![0]
  )
  const busy = [...totals].filter(([name]) => name !== "idle").reduce((sum, [, us]) => sum + us, 0)
  return [...totals]
    .filter(([name]) => name !== "idle")
    .sort((a, b) => b[1] - a[1])
    .map(([category, us]) => ({
      category,
      "CPU ms": Math.round(us / 1000),
      "share of busy": `${((us / busy) * 100).toFixed(1)} %`
    }))
}

const workload = process.argv[2] ?? "quote"
const databaseUrl = process.env["DATABASE_URL"] ?? ""
if (databaseUrl === "") throw new Error("set DATABASE_URL to a PostgreSQL database the bench may write to")
const seconds = Number(process.env["BENCH_SECONDS"] ?? "8")
const profileDir = mkdtempSync(join(tmpdir(), "bench-profile-"))

const started = await startService(
  { DATABASE_URL: databaseUrl },
  false,
  ["--cpu-prof", `--cpu-prof-dir=${profileDir}`, "--import", "tsx", "src/main.ts"]
)
process.on("exit", () => started.child.kill("SIGKILL")) // never leave a profiled service behind, even on an error
// The key printed on an empty database, else a new one from the keys CLI (the last line it prints).
const key = started.key !== ""
  ? started.key
  : execFileSync(process.execPath, ["--import", "tsx", "scripts/keys.ts", "issue", "bench", "--create"], {
    cwd: root,
    encoding: "utf8"
  })
    .trim().split("\n").at(-1)!
const service: Service = { ...started, key, auth: { authorization: `Bearer ${key}` } }
const userAddress = await approvedCustomer(service)
const work = fastifyWorkloads({ userAddress }, service.auth)
const onePayout = (await workloadsFor(service, { payout: `profile-${Date.now()}`, creates: "prof-one" }))
  .find(({ name }) => name === "GET one payout")!.request
const requests: Record<string, LoadRequest> = {
  healthz: { path: "/healthz" },
  quote: work.quote,
  create: work.create("prof"),
  one: onePayout,
  list50: work.list(50),
  list500: work.list(500)
}
const request = requests[workload]
if (request === undefined) throw new Error(`unknown workload ${workload}; one of ${Object.keys(requests).join(", ")}`)
await runLoad(service.baseUrl, service.pid, request, { connections: 16, seconds: 2 }) // warm-up
const result = await runLoad(service.baseUrl, service.pid, request, { connections: 16, seconds })
await stopService(service.child)
const file = readdirSync(profileDir).find((name) => name.endsWith(".cpuprofile"))
if (file === undefined) throw new Error("no profile written")
const profile = JSON.parse(readFileSync(join(profileDir, file), "utf8")) as CpuProfile
console.log(
  `${workload} (${API}): ${result.rps} req/s, p99 ${result.p99} ms, ${result.cpuMsPerRequest} CPU ms/request (whole run profiled)`
)
console.table(categorize(profile))
if (TOP > 0) console.table(topFunctions(profile))
if (process.env["BENCH_KEEP_PROFILE"] === "1") console.log(`profile kept: ${join(profileDir, file)}`)
else rmSync(profileDir, { recursive: true, force: true })
