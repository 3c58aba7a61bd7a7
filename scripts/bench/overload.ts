/**
 * `npm run bench -- --overload`: one replica started as production starts it (`npm start`'s node flags, the bundle) under
 * more keyed creates than it can serve, at the scale the reliability red team used:
 * - a burst: OVERLOAD_BURST (10,000) creates sent at once, each on its own connection;
 * - an open loop: OVERLOAD_RATE (400) creates a second for OVERLOAD_SECONDS (40), sent on schedule whatever the
 *   answers (a closed loop would slow down with the server and never overload it).
 * Then it checks that the replica is still up and serves normally again (a create answered 201 within seconds).
 * Prints what each phase got (2xx, 503 with Retry-After, anything else, connection errors), throughput of 2xx at
 * saturation, the peak RSS of the service, and how long it took to serve again. Exits 1 if the replica died or
 * answered anything but a 2xx or a 503 with Retry-After. Runs on a fresh database of the bench's PostgreSQL server.
 * Bounded: a fixed number of requests, every wait with a deadline.
 */
import { createDatabase } from "./compareRefs.ts"
import { type Answer, fireCreate, openLoop, serveAgain, tally } from "./overloadLoad.ts"
import { rssMb } from "./proc.ts"
import { approvedCustomer, startService, stopService } from "./service.ts"

const BURST = Number(process.env["OVERLOAD_BURST"] ?? "10000")
const RATE = Number(process.env["OVERLOAD_RATE"] ?? "400")
const SECONDS = Number(process.env["OVERLOAD_SECONDS"] ?? "40")

/** Whether the replica survived and answered only what it may: false when it died or answered anything else. */
export const runOverload = async (serverUrl: string): Promise<boolean> => {
  const databaseUrl = await createDatabase(serverUrl, `overload_${process.pid}`)
  const service = await startService({ DATABASE_URL: databaseUrl, LOG_LEVEL: "Warn" })
  let peakRss = 0
  const sampler = setInterval(() => {
    try {
      peakRss = Math.max(peakRss, rssMb(service.pid))
    } catch {
      // the process is gone: reported below
    }
  }, 50)
  let failed = false
  try {
    const userAddress = await approvedCustomer(service)
    const url = new URL(service.baseUrl)
    const send = (i: number) => fireCreate(url, service.key, userAddress, `overload-${process.pid}-${i}`)

    console.log(`overload: burst of ${BURST} creates at once …`)
    let started = performance.now()
    const burst = await Promise.all(Array.from({ length: BURST }, (_, i) => send(i)))
    report("burst", burst, (performance.now() - started) / 1000)
    failed ||= !(await settled(service.baseUrl, service.key, userAddress))

    console.log(`overload: open loop, ${RATE} creates/s for ${SECONDS} s …`)
    started = performance.now()
    const loop = await openLoop(RATE, SECONDS, (i) => send(BURST + i))
    report("open loop", loop, (performance.now() - started) / 1000)
    failed ||= !(await settled(service.baseUrl, service.key, userAddress))
    failed ||= [...burst, ...loop].some((answer) => !answer.acceptable)
  } finally {
    clearInterval(sampler)
    const alive = service.child.exitCode === null && service.child.signalCode === null
    console.log(`overload: peak RSS ${peakRss} MB; the replica ${alive ? "is still up" : "DIED"}`)
    failed ||= !alive
    await stopService(service.child)
  }
  return !failed
}

const report = (phase: string, answers: ReadonlyArray<Answer>, seconds: number) => {
  const counts = tally(answers)
  console.log(
    `overload: ${phase}: ${answers.length} requests in ${seconds.toFixed(1)} s: ${counts.ok} 2xx ` +
      `(${(counts.ok / seconds).toFixed(0)}/s), ${counts.shed} 503 with Retry-After ` +
      `(${((100 * counts.shed) / answers.length).toFixed(1)} %), ${counts.other} other answers, ` +
      `${counts.errors} connection errors${counts.examples.length > 0 ? `: ${counts.examples.join("; ")}` : ""}`
  )
}

/** Whether the replica serves a create again after the load, and how long that took. */
const settled = async (baseUrl: string, key: string, userAddress: string) => {
  const result = await serveAgain(baseUrl, key, userAddress, 30_000)
  console.log(
    result.ok
      ? `overload: serving normally again ${result.ms} ms after the load`
      : `overload: NOT serving again within 30 s: ${result.last}`
  )
  return result.ok
}
