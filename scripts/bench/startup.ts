/**
 * `DATABASE_URL=… npx tsx scripts/bench/startup.ts`: spawn → first 200 on /healthz, on an existing (migrated)
 * database, BENCH_RUNS times (default 7) for each way of starting, alternating: through `npm start`, node on
 * scripts/start.mjs with npm start's flags (what npm start execs), and node on the bundle itself; with the service's own
 * "ready in" figure (from its first line of code to listening) beside it, so the rest is node's start and loading the
 * bundle. The database is migrated by a first start that is not counted.
 */
import { spawn } from "node:child_process"
import { once } from "node:events"
import { percentile } from "./load.ts"
import { npmStartArgs, npmStartEnv, root } from "./service.ts"

const RUNS = Number(process.env["BENCH_RUNS"] ?? "7")
const databaseUrl = process.env["DATABASE_URL"] ?? ""
if (databaseUrl === "") throw new Error("DATABASE_URL names the database the service starts on")

interface Way {
  readonly name: string
  readonly command: string
  readonly args: ReadonlyArray<string>
}
const nodeFlags = npmStartArgs().filter((arg) => arg.startsWith("--"))
const ways: ReadonlyArray<Way> = [
  { name: "npm start", command: "npm", args: ["start", "--silent"] },
  { name: "node scripts/start.mjs", command: process.execPath, args: npmStartArgs() },
  { name: "node dist/server.mjs", command: process.execPath, args: [...nodeFlags, "dist/server.mjs"] }
]

const startOnce = async (way: Way) => {
  const spawned = performance.now()
  const child = spawn(way.command, way.args, {
    cwd: root,
    env: { ...process.env, ...npmStartEnv(), DATABASE_URL: databaseUrl, PORT: "0" }
  })
  let out = ""
  child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()))
  child.stderr.on("data", (chunk: Buffer) => (out += chunk.toString()))
  const deadline = Date.now() + 30_000
  let firstOk: number | undefined
  while (firstOk === undefined) {
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`${way.name} did not start:\n${out}`)
    const baseUrl = /listening on (http:\/\/\S+)/.exec(out)?.[1]
    if (baseUrl !== undefined && (await fetch(`${baseUrl}/healthz`).then((r) => r.ok, () => false))) {
      firstOk = performance.now() - spawned
    } else await new Promise((resolve) => setTimeout(resolve, 5))
  }
  const ready = Number(/ready in (\d+) ms/.exec(out)?.[1] ?? "NaN")
  const exited = once(child, "exit")
  child.kill("SIGTERM")
  await exited
  return { firstOk, ready }
}

await startOnce(ways[1]!) // migrates a new database, builds a stale bundle: not counted
const results = new Map(ways.map((way) => [way.name, { firstOk: [] as Array<number>, ready: [] as Array<number> }]))
for (let run = 0; run < RUNS; run++) {
  for (const way of ways) {
    const { firstOk, ready } = await startOnce(way)
    results.get(way.name)!.firstOk.push(firstOk)
    results.get(way.name)!.ready.push(ready)
  }
}
const summary = (values: Array<number>) => {
  const sorted = [...values].sort((a, b) => a - b)
  return `${Math.round(percentile(sorted, 0.5))} (${Math.round(sorted[0]!)}–${Math.round(sorted.at(-1)!)})`
}
console.log(`spawn → first 200, ms: median (lowest–highest) of ${RUNS} runs; "ready in" is the service's own figure`)
console.table([...results].map(([name, { firstOk, ready }]) => ({
  start: name,
  "first 200": summary(firstOk),
  "ready in": summary(ready)
})))
