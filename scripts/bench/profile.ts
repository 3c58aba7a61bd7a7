/**
 * `npx tsx scripts/bench/profile.ts <workload>`: where the service's CPU goes under load. Runs the service from its
 * TypeScript sources (so every frame keeps its package's path) with `node --cpu-prof`, puts one workload under
 * autocannon load for BENCH_SECONDS (default 8), stops it and sums the profile's self time by category (Effect
 * runtime, Schema, platform HTTP, logging, pg driver, node internals, GC, ...). Loopback only; DATABASE_URL must name
 * an empty or bench-owned PostgreSQL database. Workloads: healthz, quote, create, list50, list500.
 */
import { execFileSync, spawn } from "node:child_process"
import { once } from "node:events"
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { runLoad, type LoadRequest } from "./load.ts"
import { fastifyWorkloads } from "./fastifyCells.ts"
import { API, approvedCustomer, root, type Service } from "./service.ts"

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
  ["Schema (decode/encode)", (url) => /effect\/dist\/\w+\/(Schema|ParseResult|SchemaAST|JSONSchema|Arbitrary|Pretty)\.js/.test(url)],
  ["logging", (url) => /effect\/dist\/\w+\/internal\/logger|effect\/dist\/\w+\/Logger\.js|internal\/console|Logging\.ts/.test(url)],
  ["tracing", (url) => /effect\/dist\/\w+\/internal\/(tracer|metric)/.test(url)],
  ["Effect runtime", (url) => /node_modules\/effect\//.test(url)],
  ["@effect/platform HTTP", (url) => /@effect\/platform/.test(url)],
  ["@effect/sql + pg driver", (url) => /node_modules\/(@effect\/sql|pg|pg-protocol|pg-pool|pg-types|postgres-)/.test(url)],
  ["service code (src/, contracts/)", (url) => /\/(src|contracts)\//.test(url) && !url.includes("node_modules")],
  ["other packages", (url) => url.includes("node_modules")],
  ["node internals (http, net, streams)", (url) => url.startsWith("node:")],
  ["native / other", () => true]
]

const TOP = Number(process.env["BENCH_TOP"] ?? "0")
let top: ReadonlyArray<{ where: string; "self ms": number }> = []

const categorize = (profile: CpuProfile) => {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  const totals = new Map<string, number>()
  profile.samples.forEach((id, i) => {
    const frame = byId.get(id)!.callFrame
    const name = categories.find(([, matches]) => matches(frame.url, frame.functionName))![0]
    totals.set(name, (totals.get(name) ?? 0) + (profile.timeDeltas[i] ?? 0))
  })
  const functions = new Map<string, number>()
  profile.samples.forEach((id, i) => {
    const frame = byId.get(id)!.callFrame
    const where = `${frame.functionName || "(anonymous)"} ${frame.url.replace(/^.*node_modules\//, "").replace(/^file:\/\/.*\/(src|contracts)\//, "$1/")}`
    functions.set(where, (functions.get(where) ?? 0) + (profile.timeDeltas[i] ?? 0))
  })
  top = [...functions].filter(([name]) => !name.startsWith("(idle)") && !name.startsWith("(program)"))
    .sort((a, b) => b[1] - a[1]).slice(0, TOP).map(([where, us]) => ({ where, "self ms": Math.round(us / 1000) }))
  const busy = [...totals].filter(([name]) => name !== "idle").reduce((sum, [, us]) => sum + us, 0)
  return [...totals]
    .filter(([name]) => name !== "idle")
    .sort((a, b) => b[1] - a[1])
    .map(([category, us]) => ({ category, "CPU ms": Math.round(us / 1000), "share of busy": `${((us / busy) * 100).toFixed(1)} %` }))
}

const workload = process.argv[2] ?? "quote"
const databaseUrl = process.env["DATABASE_URL"] ?? ""
if (databaseUrl === "") throw new Error("set DATABASE_URL to a PostgreSQL database the bench may write to")
const seconds = Number(process.env["BENCH_SECONDS"] ?? "8")
const profileDir = mkdtempSync(join(tmpdir(), "bench-profile-"))

const child = spawn(process.execPath, ["--cpu-prof", `--cpu-prof-dir=${profileDir}`, "--import", "tsx", "src/main.ts"], {
  cwd: root,
  env: { ...process.env, PORT: "0", DATABASE_URL: databaseUrl, RATE_LIMIT_PER_SECOND: "100000", RATE_LIMIT_BURST: "100000" }
})
process.on("exit", () => child.kill("SIGKILL")) // never leave a profiled service behind, even on an error
let out = ""
child.stdout!.on("data", (chunk: Buffer) => (out += chunk.toString()))
child.stderr!.on("data", (chunk: Buffer) => (out += chunk.toString()))
while (!/listening on (http:\/\/\S+)/.test(out)) {
  if (child.exitCode !== null) throw new Error(`service did not start:\n${out}`)
  await new Promise((resolve) => setTimeout(resolve, 20))
}
const baseUrl = /listening on (http:\/\/\S+)/.exec(out)![1]!
// The key printed on an empty database, else a new one from the keys CLI (the last line it prints).
const key = /(cop_test_pk_[0-9A-Za-z]+)/.exec(out)?.[1] ??
  execFileSync(process.execPath, ["--import", "tsx", "scripts/keys.ts", "issue", "bench"], { cwd: root, encoding: "utf8" })
    .trim().split("\n").at(-1)!
const service: Service = { child, pid: child.pid ?? 0, baseUrl, key, startupMs: 0, auth: { authorization: `Bearer ${key}` } }
const userAddress = await approvedCustomer(service)
const work = fastifyWorkloads({ userAddress }, service.auth)
const requests: Record<string, LoadRequest> = {
  healthz: { path: "/healthz" },
  quote: work.quote,
  create: work.create("prof"),
  list50: work.list(50),
  list500: work.list(500)
}
const request = requests[workload]
if (request === undefined) throw new Error(`unknown workload ${workload}; one of ${Object.keys(requests).join(", ")}`)
await runLoad(baseUrl, service.pid, request, { connections: 16, seconds: 2 }) // warm-up
const result = await runLoad(baseUrl, service.pid, request, { connections: 16, seconds })
const exited = once(child, "exit")
child.kill("SIGTERM")
await exited
const file = readdirSync(profileDir).find((name) => name.endsWith(".cpuprofile"))
if (file === undefined) throw new Error("no profile written")
const profile = JSON.parse(readFileSync(join(profileDir, file), "utf8")) as CpuProfile
console.log(`${workload} (${API}): ${result.rps} req/s, p99 ${result.p99} ms, ${result.cpuMsPerRequest} CPU ms/request (whole run profiled)`)
console.table(categorize(profile))
if (TOP > 0) console.table(top)
if (process.env["BENCH_KEEP_PROFILE"] === "1") console.log(`profile kept: ${join(profileDir, file)}`)
else rmSync(profileDir, { recursive: true, force: true })
