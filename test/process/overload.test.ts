/**
 * A replica started as production starts it (the bundle, npm start's node flags) under more keyed creates than it
 * can serve: a burst at once, then an open loop that keeps sending whatever the answers. Before load shedding the
 * requests piled up in the heap until the process aborted ("JavaScript heap out of memory"). Now it stays up, every
 * answer is a 2xx or a 503 with Retry-After, its memory stays bounded, and it serves normally once the load stops.
 *
 * The heap is half of production's, so that the suite's scale (a few thousand requests, which this machine carries
 * beside the rest of the suite) is past what the heap holds: with no admission limit the burst kills it. Not smaller:
 * the service holds about 30 MB of its own, and on a 64 MB heap V8 collected the old space continuously (250
 * mark-compacts in 40 s, its collector threads a whole core), which starved the replica of the CPU to even accept the
 * connections it should have answered 503 (1,400 waiting in the kernel; some unanswered after 120 s on a busy
 * machine). `npm run bench -- --overload` runs the red team's scale on the production heap.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Answer, fireCreate, openLoop, serveAgain, tally } from "../../scripts/bench/overloadLoad.ts"
import { rssMb } from "../../scripts/bench/proc.ts"
import { approvedCustomer, type Service, startService, stopService } from "../../scripts/bench/service.ts"
import { acquireTestDatabase, type TestDatabase } from "../support/database.ts"

const HEAP_MB = 96
const NODE_ARGS = [`--max-old-space-size=${HEAP_MB}`, "--max-semi-space-size=16", "scripts/start.mjs"]
/** The heap, the young generation, code and Node's own native memory: what the process may reach. */
const RSS_CAP_MB = HEAP_MB + 48 + 140
const BURST = 2_500
const RATE = 200
const SECONDS = 10

let database: TestDatabase
let service: Service
let userAddress: string
let peakRss = 0
let sampler: NodeJS.Timeout

beforeAll(async () => {
  database = await acquireTestDatabase()
  service = await startService({ DATABASE_URL: database.url, LOG_LEVEL: "Warn" }, true, NODE_ARGS)
  userAddress = await approvedCustomer(service)
  sampler = setInterval(() => {
    if (alive()) peakRss = Math.max(peakRss, rssMb(service.pid))
  }, 25)
}, 180_000)

afterAll(async () => {
  clearInterval(sampler)
  if (service !== undefined) await stopService(service.child)
  await database?.release()
})

const alive = () => service.child.exitCode === null && service.child.signalCode === null

/** Why the replica is gone: how it exited and the last of what it wrote. */
const death = () =>
  `exit code ${service.child.exitCode}, signal ${service.child.signalCode}; its last output:\n${
    service.output().slice(-3_000)
  }`

const send = (i: number) =>
  fireCreate(new URL(service.baseUrl), service.key, userAddress, `overload-${process.pid}-${i}-${Date.now()}`)

const describeUnacceptable = (answers: ReadonlyArray<Answer>) => {
  const counts = tally(answers)
  return `${counts.ok} 2xx, ${counts.shed} 503 with Retry-After, ${counts.other} other, ${counts.errors} errors: ${
    counts.examples.join("; ")
  }`
}

describe("overload: one replica on a small heap", () => {
  it(
    `a burst of ${BURST} creates at once: it stays up, answers each with a 2xx or a 503 with Retry-After, and serves again`,
    async () => {
      const answers = await Promise.all(Array.from({ length: BURST }, (_, i) => send(i)))
      expect(alive(), `the replica died under the burst: ${death()}`).toBe(true)
      expect(answers.filter((answer) => !answer.acceptable), describeUnacceptable(answers)).toEqual([])
      const counts = tally(answers)
      expect(counts.ok).toBeGreaterThan(0)
      expect(counts.shed).toBeGreaterThan(0)
      const again = await serveAgain(service.baseUrl, service.key, userAddress, 30_000)
      expect(again, `not serving again: ${again.last}`).toMatchObject({ ok: true })
      expect(peakRss).toBeLessThan(RSS_CAP_MB)
    },
    240_000
  )

  it(`an open loop of ${RATE} creates a second for ${SECONDS} s: the same`, async () => {
    const answers = await openLoop(RATE, SECONDS, (i) => send(BURST + i))
    expect(alive(), `the replica died under the open loop: ${death()}`).toBe(true)
    expect(answers.filter((answer) => !answer.acceptable), describeUnacceptable(answers)).toEqual([])
    const again = await serveAgain(service.baseUrl, service.key, userAddress, 30_000)
    expect(again, `not serving again: ${again.last}`).toMatchObject({ ok: true })
    expect(peakRss).toBeLessThan(RSS_CAP_MB)
  }, 240_000)
})
