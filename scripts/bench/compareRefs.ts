/**
 * `npm run bench -- --compare <git-ref>`: the working tree against another commit, in one run. The ref is checked out
 * into a temporary worktree, installed (`npm ci`) and built there; both services then run side by side, each on its
 * own fresh database of the same PostgreSQL, and every workload alternates ref, working tree, ref, … so drift in the
 * machine's load hits both. Each side runs on the node its own `npm start` would: the tree's `node_modules/.bin/node`
 * when it ships one, else the first `node` on PATH outside node_modules (BENCH_COMPARE_NODE overrides the ref's).
 * Prints req/s, p50/p99 and CPU ms per request of each side (the median of the pairs, and the lowest–highest) and the
 * ratio working tree / ref, start-up to the first 200, and RSS after the runs. `--env KEY=VALUE` sets a variable for
 * the working tree's service only (`--compare HEAD --env …`: one setting against another on the same code).
 * `--with-baseline` runs the Fastify + pg baseline (baselines/fastifyPg.ts, the service's statements) as a third side,
 * on the working tree's database: CPU per request of before and after, each against the same baseline, in one run.
 */
import { execFileSync } from "node:child_process"
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { delimiter, join } from "node:path"
import pg from "pg"
import { type BaselineProcess, pairedRatio, startBaseline, stopBaseline } from "./compare.ts"
import { fastifyWorkloads, prepareFastify } from "./fastifyCells.ts"
import { confirmRequest, preparedPayouts } from "./flows.ts"
import { type LoadRequest, type LoadResult, median, runLoad } from "./load.ts"
import { rssMb } from "./proc.ts"
import {
  API,
  approvedCustomer,
  json,
  npmStartArgs,
  payoutBody,
  root,
  type Service,
  startService,
  stopService,
  type Tree
} from "./service.ts"

const PAIRS = Number(process.env["BENCH_PAIRS"] ?? "3")
const SECONDS = Number(process.env["BENCH_SECONDS"] ?? "5")
const CONNECTIONS = Number(process.env["BENCH_CONCURRENCY"] ?? "16")
const CONFIRMS = Number(process.env["BENCH_CONFIRMS"] ?? "1000")

/** The node `npm start` would run in `dir`: its own node_modules/.bin/node, else PATH's first outside node_modules. */
const nodeOf = (dir: string): string => {
  const shipped = join(dir, "node_modules", ".bin", "node")
  if (existsSync(shipped)) return shipped
  const onPath = (process.env["PATH"] ?? "").split(delimiter)
    .filter((entry) => entry !== "" && !entry.includes("node_modules"))
    .map((entry) => join(entry, "node"))
    .find((candidate) => existsSync(candidate))
  return onPath ?? process.execPath
}

const versionOf = (node: string) => execFileSync(node, ["--version"], { encoding: "utf8" }).trim()

const run = (command: string, args: ReadonlyArray<string>, cwd: string) =>
  execFileSync(command, args, { cwd, stdio: ["ignore", "pipe", "inherit"], encoding: "utf8" })

/** A worktree of `ref`, installed and built as CI would; removed by the returned function. */
const checkout = (ref: string) => {
  const dir = mkdtempSync(join(tmpdir(), "bench-ref-"))
  run("git", ["worktree", "add", "--detach", dir, ref], root)
  const remove = () => {
    run("git", ["worktree", "remove", "--force", dir], root)
    rmSync(dir, { recursive: true, force: true })
  }
  try {
    console.log(`bench: installing ${ref} in ${dir} (npm ci) …`)
    run("npm", ["ci", "--no-audit", "--no-fund", "--loglevel=error"], dir)
    run("npm", ["run", "-s", "build"], dir)
    return { dir, remove }
  } catch (error) {
    remove()
    throw error
  }
}

/** A fresh database named `name` on the server at `serverUrl`; its URL. */
export const createDatabase = async (serverUrl: string, name: string) => {
  const admin = new pg.Client({ connectionString: serverUrl })
  await admin.connect()
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${name}`)
    await admin.query(`CREATE DATABASE ${name}`)
  } finally {
    await admin.end()
  }
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  return url.toString()
}

/** One workload on one side: the request of each pair's run (a confirm needs payouts of its own per run). */
interface SideWorkload {
  readonly name: string
  readonly request: (pair: number) => LoadRequest
  /** A fixed number of requests per run instead of SECONDS (one-shot work). */
  readonly amount?: number
}

interface Side {
  readonly label: string
  readonly target: { readonly baseUrl: string; readonly pid: number }
  readonly workloads: ReadonlyArray<SideWorkload>
}

/** Confirms of payouts made beforehand through `service`, CONFIRMS a run; hashes from `hashesFrom` on. */
const confirmWorkload = async (service: Service, hashesFrom: number): Promise<SideWorkload> => {
  const perRun = CONFIRMS + CONNECTIONS // autocannon prepares a request per connection ahead of stopping at `amount`
  const ids = await preparedPayouts(service, perRun * PAIRS)
  return {
    name: `POST payouts/{id}/confirm (${CONFIRMS} a run)`,
    request: (pair) =>
      confirmRequest(service, ids.slice(pair * perRun, (pair + 1) * perRun), hashesFrom + pair * perRun),
    amount: CONFIRMS
  }
}

const everyPair = (workloads: ReadonlyArray<{ readonly name: string; readonly request: LoadRequest }>) =>
  workloads.map((workload): SideWorkload => ({ name: workload.name, request: () => workload.request }))

/**
 * The compare workloads on `service`: the health probe, a cached quote, keyed creates, one payout, a list of 50.
 * `keys.payout` is the Idempotency-Key of the payout created for the one-payout read, `keys.creates` the prefix of the
 * creates' keys.
 */
export const workloadsFor = async (
  service: Service,
  keys: { readonly payout: string; readonly creates: string }
) => {
  const userAddress = await approvedCustomer(service)
  const work = fastifyWorkloads({ userAddress }, service.auth)
  const one = await fetch(`${service.baseUrl}${API}/payouts`, {
    method: "POST",
    headers: { ...service.auth, ...json, "idempotency-key": keys.payout },
    body: payoutBody(userAddress)
  }).then((r) => r.json() as Promise<{ payoutId: string }>)
  return [
    { name: "GET /healthz", request: { path: "/healthz" } },
    { name: "cached quote", request: work.quote },
    { name: "POST payouts (Idempotency-Key)", request: work.create(keys.creates) },
    { name: "GET one payout", request: { path: `${API}/payouts/${one.payoutId}`, headers: service.auth } },
    { name: "GET payouts?limit=50", request: work.list(50) }
  ]
}

const startSide = async (
  label: string,
  tree: Tree,
  databaseUrl: string,
  env: Record<string, string> = {}
): Promise<Side & { readonly service: Service }> => {
  const service = await startService({ ...env, DATABASE_URL: databaseUrl }, true, npmStartArgs(tree.dir), tree)
  const workloads = everyPair(await workloadsFor(service, { payout: `compare-${Date.now()}`, creates: "cmp" }))
  return { label, target: service, service, workloads: [...workloads, await confirmWorkload(service, 1_000_000)] }
}

/**
 * The Fastify baseline on the working tree's database, its integration and key: the working tree's workloads, with
 * creates of its own keys and confirms of payouts of its own.
 */
const startBaselineSide = async (work: Side & { readonly service: Service }, databaseUrl: string) => {
  const prepared = await prepareFastify(work.service, databaseUrl)
  const process = await startBaseline("scripts/bench/baselines/fastifyPg.ts", {
    DATABASE_URL: databaseUrl,
    BASELINE_TEMPLATES: JSON.stringify(prepared.templates)
  })
  const creates = fastifyWorkloads(prepared, work.service.auth).create("fst")
  const workloads = await Promise.all(
    work.workloads.map(async (workload): Promise<SideWorkload> =>
      workload.amount !== undefined
        ? confirmWorkload(work.service, 2_000_000)
        : workload.name.startsWith("POST payouts")
        ? { name: workload.name, request: () => creates }
        : workload
    )
  )
  return { process, side: { label: "Fastify + pg baseline", target: process, workloads } satisfies Side }
}

const cpu = (result: LoadResult) => result.cpuMsPerRequest

const spread = (values: ReadonlyArray<number>) => `${Math.min(...values)}–${Math.max(...values)}`

export const compareWithRef = async (
  ref: string,
  serverUrl: string,
  workEnv: Record<string, string> = {},
  options: { readonly withBaseline?: boolean } = {}
) => {
  const sha = run("git", ["rev-parse", "--short", ref], root).trim()
  const head = run("git", ["rev-parse", "--short", "HEAD"], root).trim()
  const dirty = run("git", ["status", "--porcelain", "--untracked-files=no"], root).trim() !== ""
  const checkedOut = checkout(ref)
  try {
    const refTree: Tree = { dir: checkedOut.dir, node: process.env["BENCH_COMPARE_NODE"] ?? nodeOf(checkedOut.dir) }
    const workTree: Tree = { dir: root, node: nodeOf(root) }
    // Built as the ref was: a stale bundle would be rebuilt by the first start, inside its start-up time.
    run("npm", ["run", "-s", "build"], root)
    const before = await startSide(`${ref} (${sha})`, refTree, await createDatabase(serverUrl, "bench_compare_ref"))
    const settings = Object.entries(workEnv).map(([key, value]) => `${key}=${value}`).join(" ")
    const workDatabase = await createDatabase(serverUrl, "bench_compare_work")
    const after = await startSide(
      `working tree (${head}${dirty ? "+changes" : ""})${settings === "" ? "" : ` with ${settings}`}`,
      workTree,
      workDatabase,
      workEnv
    )
    let baseline: { readonly process: BaselineProcess; readonly side: Side } | undefined
    try {
      if (options.withBaseline === true) baseline = await startBaselineSide(after, workDatabase)
      console.log(
        `\n## --compare ${ref}: ${PAIRS} alternating pairs of ${SECONDS} s per workload, ${CONNECTIONS} connections`
      )
      console.log(
        `ref: ${before.label} on node ${versionOf(refTree.node)}; working tree: ${after.label} on node ${
          versionOf(workTree.node)
        }`
      )
      console.log(
        `start-up to first 200: ref ${Math.round(before.service.startupMs)} ms, working tree ${
          Math.round(after.service.startupMs)
        } ms`
      )
      const rows = []
      const runOn = (side: Side, index: number, pair: number) => {
        const workload = side.workloads[index]!
        const options = workload.amount === undefined
          ? { connections: CONNECTIONS, seconds: SECONDS }
          : { connections: CONNECTIONS, seconds: 60, amount: workload.amount }
        return runLoad(side.target.baseUrl, side.target.pid, workload.request(pair), options)
      }
      for (const [index, workload] of before.workloads.entries()) {
        const refRuns: Array<LoadResult> = []
        const workRuns: Array<LoadResult> = []
        const baselineRuns: Array<LoadResult> = []
        for (let pair = 0; pair < PAIRS; pair++) {
          refRuns.push(await runOn(before, index, pair))
          workRuns.push(await runOn(after, index, pair))
          if (baseline !== undefined) baselineRuns.push(await runOn(baseline.side, index, pair))
        }
        const failed = [...refRuns, ...workRuns, ...baselineRuns].reduce((n, r) => n + r.non2xx + r.errors, 0)
        const againstBaseline = baseline === undefined ? {} : {
          "CPU ms/req baseline": median(baselineRuns.map((r) => r.cpuMsPerRequest)),
          "CPU ratio ref / baseline": pairedRatio(refRuns, baselineRuns, cpu),
          "CPU ratio work / baseline": pairedRatio(workRuns, baselineRuns, cpu),
          "req/s baseline": median(baselineRuns.map((r) => r.rps))
        }
        rows.push({
          workload: workload.name,
          "req/s ref": median(refRuns.map((r) => r.rps)),
          "req/s work": median(workRuns.map((r) => r.rps)),
          "req/s ratio": (median(workRuns.map((r) => r.rps)) / median(refRuns.map((r) => r.rps))).toFixed(2),
          "CPU ms/req ref": median(refRuns.map((r) => r.cpuMsPerRequest)),
          "CPU ms/req work": median(workRuns.map((r) => r.cpuMsPerRequest)),
          "CPU ms/req ref range": spread(refRuns.map((r) => r.cpuMsPerRequest)),
          "CPU ms/req work range": spread(workRuns.map((r) => r.cpuMsPerRequest)),
          "p50/p99 ms ref": `${median(refRuns.map((r) => r.p50))}/${median(refRuns.map((r) => r.p99))}`,
          "p50/p99 ms work": `${median(workRuns.map((r) => r.p50))}/${median(workRuns.map((r) => r.p99))}`,
          ...againstBaseline,
          "non-2xx": failed
        })
      }
      console.table(rows)
      console.log(
        `RSS after the runs: ref ${rssMb(before.service.pid)} MB, working tree ${rssMb(after.service.pid)} MB${
          baseline === undefined ? "" : `, baseline ${rssMb(baseline.process.pid)} MB`
        }`
      )
      const failed = rows.reduce((n, row) => n + row["non-2xx"], 0)
      if (failed > 0) {
        throw new Error(`${failed} requests were not answered 2xx: the figures above do not measure the workloads`)
      }
    } finally {
      if (baseline !== undefined) await stopBaseline(baseline.process)
      await stopService(before.service.child)
      await stopService(after.service.child)
    }
  } finally {
    checkedOut.remove()
  }
}
