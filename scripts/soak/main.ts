/**
 * `npm run soak -- --minutes 10 --replicas 3`: replicas of the service (as `npm start` runs them, mock mode) on one
 * database, a webhook receiver that fails, hangs and answers slowly, a partner workload across the replicas, and a
 * replica SIGKILLed and started again at random moments; then, after deliveries drain (bounded), the invariants
 * checked from the database and the receiver. Prints a report; exits 1 when an invariant broke (2: the run itself
 * could not be carried out).
 *
 * Options: --minutes N (default 1), --replicas N (default 2), --seed N (default: the time), --no-kills,
 * --workload all|creates (creates: keyed creates only, for capacity), --concurrency N (workers
 * in all, default 8), --drain-seconds N (default 60). DATABASE_URL: a server to create the run's database on; otherwise a
 * throw-away embedded PostgreSQL.
 */
import { randomBytes } from "node:crypto"
import { percentile } from "../bench/load.ts"
import { approvedCustomer, stopService } from "../bench/service.ts"
import { SoakClient } from "./client.ts"
import { pendingDeliveries, snapshot, soakDatabase } from "./database.ts"
import { allInvariants, type ReceivedDelivery, type Verdict } from "./invariants.ts"
import { parseOptions } from "./options.ts"
import { seededRandom } from "./random.ts"
import { startReceiver } from "./receiver.ts"
import { type Replicas, startReplicas } from "./replicas.ts"
import { runWorkload } from "./workload.ts"

const options = parseOptions(process.argv.slice(2))
const log = (line: string) => console.log(`soak: ${line}`)
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** The delivery timeout the replicas run with; the receiver holds a hung request a little past it. */
const WEBHOOK_TIMEOUT_MS = 1500

const env = (databaseUrl: string): Record<string, string> => ({
  APP_MODE: "mock",
  DATABASE_URL: databaseUrl,
  ADMIN_PORT: "0",
  LOG_LEVEL: "warn",
  WEBHOOK_TIMEOUT_MS: String(WEBHOOK_TIMEOUT_MS),
  WEBHOOK_RETRY_BASE_MS: "250",
  MOCK_LIFECYCLE_DELAY_MS: "500",
  RECONCILE_INTERVAL_MS: "5000",
  RECONCILE_CLAIM_STALE_AFTER_MS: "10000",
  API_KEY_CACHE_MS: "5000"
})

/** Kills at random moments, never more than one replica down: the first within 10-40 s, then every 15-45 s. */
const killLoop = async (replicas: Replicas, until: number) => {
  const random = seededRandom(options.seed + 2)
  let wait = random.int(10_000, 40_000)
  while (Date.now() + wait < until) {
    await sleep(wait)
    if (replicas.all.every((r) => r.up)) {
      const index = random.int(0, replicas.all.length - 1)
      log(`SIGKILL replica ${index}`)
      await replicas.kill(index)
      log(`replica ${index} serves again`)
    }
    wait = random.int(15_000, 45_000)
  }
}

const tally = (items: ReadonlyArray<string>) => {
  const counts = new Map<string, number>()
  for (const item of items) counts.set(item, (counts.get(item) ?? 0) + 1)
  return counts
}

const report = (lines: ReadonlyArray<string>) => console.log(lines.join("\n"))

const main = async (): Promise<number> => {
  const startedAll = Date.now()
  const database = await soakDatabase(process.env["DATABASE_URL"])
  log(`database: ${database.description}`)
  const receiver = await startReceiver(seededRandom(options.seed + 1), {
    fail: 0.1,
    hang: 0.03,
    slow: 0.1,
    slowMs: 400,
    holdMs: WEBHOOK_TIMEOUT_MS + 2_000
  })
  let replicas: Replicas | undefined
  try {
    replicas = await startReplicas(options.replicas, env(database.url))
    log(`${options.replicas} replicas: ${replicas.all.map((r) => r.service.baseUrl).join(" ")}`)
    const auth = { authorization: `Bearer ${replicas.key}` }
    const first = replicas.all[0]!.service
    const registered = await fetch(`${first.baseUrl}/api/integrations/webhook-endpoints`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ url: receiver.url })
    })
    const endpoint = (await registered.json()) as { endpointId?: string; secret?: string }
    if (registered.status !== 201 || endpoint.endpointId === undefined || endpoint.secret === undefined) {
      throw new Error(`registering the receiver answered ${registered.status}`)
    }
    receiver.secret = endpoint.secret
    const users = await Promise.all(Array.from({ length: 4 }, () => approvedCustomer(first)))

    const client = new SoakClient(replicas.all, auth)
    const started = Date.now()
    const until = started + options.minutes * 60_000
    const kills = options.kills && options.replicas > 1 ? killLoop(replicas, until) : Promise.resolve()
    if (options.kills && options.replicas < 2) log("one replica: no kills (they would take every replica down)")
    log(`workload ${options.workload}, ${options.concurrency} workers, ${options.minutes} min, seed ${options.seed}`)
    const state = await runWorkload({
      client,
      random: seededRandom(options.seed),
      users,
      replicas: options.replicas,
      kind: options.workload,
      concurrency: options.concurrency,
      until,
      run: randomBytes(6).toString("hex")
    })
    await kills
    const seconds = (Date.now() - started) / 1000

    // Drain: the receiver answers at once now; wait (bounded) until nothing is pending for it.
    receiver.calm()
    const drainStart = Date.now()
    const drainUntil = drainStart + options.drainSeconds * 1000
    let pending = await pendingDeliveries(database.url, endpoint.endpointId)
    const pendingAtEnd = pending
    while (pending > 0 && Date.now() < drainUntil) {
      await sleep(500)
      pending = await pendingDeliveries(database.url, endpoint.endpointId)
    }
    log(
      `drain: ${pendingAtEnd} deliveries pending when the workload stopped, ${pending} still pending after ${
        Math.round((Date.now() - drainStart) / 1000)
      } s`
    )
    await replicas.stop()
    const rows = await snapshot(database.url, endpoint.endpointId)
    const workload = {
      created: state.created,
      confirmed: state.confirmed,
      races: state.raceRecords,
      serverErrors: client.serverErrors,
      connectionErrors: client.connectionErrors
    }
    const verdicts = allInvariants(rows, workload, receiver.deliveries, replicas.kills)
    printReport({ seconds, client, state, replicas, verdicts, received: receiver.deliveries, startedAll })
    return verdicts.every((v) => v.ok) ? 0 : 1
  } finally {
    if (replicas !== undefined) await Promise.all(replicas.all.map((r) => stopService(r.service.child)))
    await receiver.close()
    await database.drop()
  }
}

const printReport = (input: {
  readonly seconds: number
  readonly client: SoakClient
  readonly state: Awaited<ReturnType<typeof runWorkload>>
  readonly replicas: Replicas
  readonly verdicts: ReadonlyArray<Verdict>
  readonly received: ReadonlyArray<ReceivedDelivery>
  readonly startedAll: number
}) => {
  const { client, seconds, state, verdicts } = input
  const rows = [...client.stats].sort(([a], [b]) => a.localeCompare(b)).map(([op, stats]) => {
    const sorted = [...stats.latencies].sort((a, b) => a - b)
    const statuses = [...stats.statuses].sort(([a], [b]) => a.localeCompare(b)).map(([s, n]) => `${s}×${n}`).join(" ")
    return `  ${op.padEnd(24)} ${String(sorted.length).padStart(7)} ${
      (sorted.length / seconds).toFixed(1).padStart(8)
    }/s  p50 ${percentile(sorted, 0.5).toFixed(1).padStart(7)} ms  p99 ${
      percentile(sorted, 0.99).toFixed(1).padStart(7)
    } ms  ${statuses}`
  })
  const total = [...client.stats.values()].reduce((sum, s) => sum + s.latencies.length, 0)
  const payouts = new Set(state.created.filter((c) => c.kind === "payout").map((c) => c.id)).size
  const kills = input.replicas.kills
  report([
    "",
    "## Soak report",
    `duration: ${seconds.toFixed(0)} s of workload (${
      ((Date.now() - input.startedAll) / 1000).toFixed(0)
    } s in all), ${options.replicas} replicas, workload ${options.workload}, seed ${options.seed}`,
    `requests: ${total} answered (${
      (total / seconds).toFixed(1)
    }/s), ${client.connectionErrors.length} without an answer`,
    `payouts created: ${payouts} (${(payouts / seconds).toFixed(1)} creates/s)`,
    `hash races: ${state.races.total}, ${state.races.oneWinner} with exactly one winner${
      state.races.losers.size === 0
        ? ""
        : ` (the other answered ${[...state.races.losers].map(([answer, n]) => `${answer}×${n}`).join(", ")})`
    }, ${state.races.noWinner} with none`,
    `kills survived: ${kills.filter((k) => k.readyAt !== undefined).length} of ${kills.length}${
      kills.length > 0
        ? ` (restart to serving: ${
          kills.map((k) => `${(((k.readyAt ?? 0) - k.killedAt) / 1000).toFixed(1)} s`).join(", ")
        })`
        : ""
    }`,
    `webhook deliveries received: ${input.received.length} (${
      [...tally(input.received.map((d) => (d.answered === 0 ? "hung" : `answered ${d.answered}`)))]
        .map(([answer, n]) => `${answer}: ${n}`)
        .join(", ")
    })`,
    "per operation (answered requests, throughput, latency, statuses):",
    ...rows,
    "invariants:",
    ...verdicts.flatMap((v) => [
      `  ${v.ok ? "PASS" : "FAIL"} ${v.name}: ${v.violations} violations (${v.checked})`,
      ...v.examples.map((e) => `       ${e}`)
    ]),
    verdicts.every((v) => v.ok) ? "soak: PASS" : "soak: FAIL"
  ])
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(
      `soak: the run could not be carried out: ${error instanceof Error ? error.stack ?? error.message : String(error)}`
    )
    process.exit(2)
  }
)
