/**
 * `npx tsx scripts/bench/profile.ts <workload>`: where the service's CPU goes under load. Runs the service from its
 * TypeScript sources (so every frame keeps its package's path) with `node --cpu-prof` and `npm start`'s heap flags,
 * types removed by node itself (`--experimental-transform-types`: tsx's esbuild wraps every function of src/ in a
 * naming helper that the bundle `npm start` runs does not have, which put a few percent on src/), puts one workload under
 * autocannon load for BENCH_SECONDS (default 8), stops it and sums the profile's self time by category (Effect
 * runtime, Schema, platform HTTP, logging, pg driver, node internals, GC, ...). Loopback only; DATABASE_URL must name
 * an empty or bench-owned PostgreSQL database. Workloads: healthz, quote, create, one (GET one payout), list50, list500.
 *
 * `BENCH_PROFILE=alloc`: bytes allocated instead of CPU time, per request, by function (V8's sampling heap profiler
 * over the inspector protocol, keeping the samples of objects the GC has since collected: what the young generation
 * churns through, not what stays).
 */
import { execFileSync } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { runLoad, type LoadRequest } from "./load.ts"
import { workloadsFor } from "./compareRefs.ts"
import { fastifyWorkloads } from "./fastifyCells.ts"
import { API, approvedCustomer, npmStartArgs, root, type Service, startService, stopService } from "./service.ts"

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

interface SamplingHeapNode {
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number }
  readonly selfSize: number
  readonly children: ReadonlyArray<SamplingHeapNode>
}
interface SamplingHeapProfile {
  readonly head: SamplingHeapNode
}

/** The inspector of the service (the URL it printed), one method call at a time. */
const inspectorOf = async (output: string) => {
  const url = /Debugger listening on (ws:\/\/\S+)/.exec(output)?.[1]
  if (url === undefined) throw new Error("the service printed no inspector URL")
  const socket = new WebSocket(url)
  await new Promise((resolve, reject) => {
    socket.onopen = resolve
    socket.onerror = reject
  })
  let next = 0
  const pending = new Map<number, (result: unknown) => void>()
  socket.onmessage = (message) => {
    const { id, result } = JSON.parse(String(message.data)) as { id?: number; result?: unknown }
    if (id !== undefined) pending.get(id)?.(result)
  }
  return {
    call: (method: string, params: object = {}) =>
      new Promise<unknown>((resolve) => {
        const id = ++next
        pending.set(id, resolve)
        socket.send(JSON.stringify({ id, method, params }))
      }),
    close: () => socket.close()
  }
}

/** Sampled bytes by function (self), per request, the largest first; `BENCH_TOP` rows (default 30). */
const allocationsByFunction = (profile: SamplingHeapProfile, requests: number) => {
  const totals = new Map<string, number>()
  const walk = (node: SamplingHeapNode) => {
    const frame = node.callFrame
    const where = `${frame.functionName || "(anonymous)"} ${
      frame.url.replace(/^.*node_modules\//, "").replace(/^file:\/\/.*\/(src|contracts)\//, "$1/")
    }:${frame.lineNumber + 1}`
    totals.set(where, (totals.get(where) ?? 0) + node.selfSize)
    node.children.forEach(walk)
  }
  walk(profile.head)
  const all = [...totals.values()].reduce((sum, bytes) => sum + bytes, 0)
  console.log(`${Math.round(all / requests)} bytes per request in all`)
  return [...totals]
    .sort((a, b) => b[1] - a[1])
    .slice(0, TOP > 0 ? TOP : 30)
    .map(([where, bytes]) => ({ where, "bytes/request": Math.round(bytes / requests) }))
}

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

const allocations = process.env["BENCH_PROFILE"] === "alloc"
const started = await startService(
  { DATABASE_URL: databaseUrl },
  false,
  [
    ...npmStartArgs().filter((arg) => arg.startsWith("--")),
    ...(allocations ? ["--inspect=127.0.0.1:0"] : ["--cpu-prof", `--cpu-prof-dir=${profileDir}`]),
    "--experimental-transform-types",
    "--no-warnings",
    "src/main.ts"
  ]
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
if (allocations) {
  const inspector = await inspectorOf(service.output())
  await inspector.call("HeapProfiler.startSampling", {
    samplingInterval: 4096,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true
  })
  const result = await runLoad(service.baseUrl, service.pid, request, { connections: 16, seconds })
  const { profile } = await inspector.call("HeapProfiler.stopSampling") as { profile: SamplingHeapProfile }
  inspector.close()
  await stopService(service.child)
  const requests = result.rps * seconds
  console.log(`${workload}: ${result.rps} req/s; bytes allocated per request (sampled), by function:`)
  console.table(allocationsByFunction(profile, requests))
  if (process.env["BENCH_KEEP_PROFILE"] === "1") {
    const kept = join(profileDir, "allocations.heapprofile")
    writeFileSync(kept, JSON.stringify(profile))
    console.log(`profile kept: ${kept}`)
  }
} else {
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
}
