/**
 * The database failing under the service (through a TCP proxy, ./support/tcpProxy.ts): refused
 * connections, connections reset under load, and a long table lock. The client never sees a 500 for
 * trouble it can retry: it gets 503 ErrorBody (with Retry-After) within a bound, the service recovers
 * without a restart, and no payout is lost or duplicated.
 */
import { RETRY_AFTER_SECONDS } from "../../src/http/DatabaseUnavailable.ts"
import { describe, expect, vi } from "vitest"
import { countPayouts, decodePayout, expectError, newPartner, PAYOUTS, payoutBody, sql } from "../support/flows.ts"
import { holdLock } from "../support/locks.ts"
import { type ProxiedServer, proxiedTest, timedCall, type TimedAnswer } from "../support/resilience.ts"

const it = proxiedTest()
it.afterEach(({ proxied }) => proxied.proxy.setMode("pass"))

const BOUND_MS = 10_000

const get = (proxied: ProxiedServer, path: string, apiKey?: string) =>
  timedCall(proxied.server.baseUrl, path, { boundMs: BOUND_MS, ...(apiKey === undefined ? {} : { apiKey }) })

const expectUnavailable = (answer: TimedAnswer) => {
  expectError(answer, 503)
  // the database's own wait, not the default of 503s that name none
  expect(answer.headers.get("retry-after")).toBe(String(RETRY_AFTER_SECONDS))
}

/** Waits (bounded) until `path` answers 200 again. */
const recovered = (proxied: ProxiedServer, path: string, apiKey?: string) =>
  vi.waitFor(async () => {
    const answer = await get(proxied, path, apiKey)
    expect(answer.status, answer.text).toBe(200)
  }, { timeout: 20_000, interval: 50 })

describe("the app's connections", () => {
  it("carry bounded statement, lock and idle-in-transaction timeouts", async ({ proxied }) => {
    const settings = await sql(
      proxied.server,
      (q) =>
        q`SELECT current_setting('statement_timeout') AS statement, current_setting('lock_timeout') AS lock,
               current_setting('idle_in_transaction_session_timeout') AS idle`
    )
    expect(settings).toEqual([{ statement: "2s", lock: "1s", idle: "5s" }])
  })
})

describe("the database refuses connections", () => {
  it("answers 503 ErrorBody quickly on every kind of request, and recovers when it accepts again", async ({ proxied }) => {
    const partner = await newPartner(proxied.server)
    const user = await partner.approvedUser()

    proxied.proxy.setMode("refuse")
    proxied.proxy.resetAll()

    expectUnavailable(await get(proxied, PAYOUTS, partner.apiKey))
    const created = await timedCall(proxied.server.baseUrl, PAYOUTS, {
      apiKey: partner.apiKey,
      body: payoutBody(user),
      headers: { "idempotency-key": `refused-${crypto.randomUUID()}` },
      boundMs: BOUND_MS
    })
    expectUnavailable(created)
    expectError(await get(proxied, "/readyz"), 503)
    expect((await get(proxied, "/healthz")).status).toBe(200)

    proxied.proxy.setMode("pass")
    await recovered(proxied, PAYOUTS, partner.apiKey)
    await recovered(proxied, "/readyz")
    expect(await countPayouts(proxied.server, partner.integrationId)).toBe(0)
  })
})

describe("connections reset under load", () => {
  it("answers only 2xx or 503, and every Idempotency-Key ends with exactly one payout", async ({ proxied }) => {
    const partner = await newPartner(proxied.server)
    const user = await partner.approvedUser()
    const KEYS = 30
    const WORKERS = 6
    const RESETS = 4
    const answers: Array<TimedAnswer> = []
    const record = (answer: TimedAnswer) => {
      answers.push(answer)
      return answer
    }

    /** POSTs with one key until it gets its 201 (503 is retried, as a client would), listing in between. */
    const createWithKey = async (key: string): Promise<string> => {
      for (let attempt = 0; attempt < 20; attempt++) {
        const answer = record(
          await timedCall(proxied.server.baseUrl, PAYOUTS, {
            apiKey: partner.apiKey,
            body: payoutBody(user),
            headers: { "idempotency-key": key },
            boundMs: BOUND_MS
          })
        )
        if (answer.status === 201) return decodePayout(answer.json).payoutId
        record(await get(proxied, PAYOUTS, partner.apiKey))
      }
      throw new Error(`key ${key}: no 201 after 20 attempts`)
    }

    const keys = Array.from({ length: KEYS }, (_, i) => `reset-${i}-${crypto.randomUUID()}`)
    const queue = [...keys]
    const ids: Array<string> = []
    const worker = async () => {
      for (let key = queue.shift(); key !== undefined; key = queue.shift()) ids.push(await createWithKey(key))
    }
    let destroyed = 0
    const resetter = async () => {
      for (let round = 1; round <= RESETS; round++) {
        await vi.waitFor(() => expect(answers.length).toBeGreaterThanOrEqual(round * 6), {
          timeout: 30_000,
          interval: 2
        })
        destroyed += proxied.proxy.resetAll()
      }
    }
    await Promise.all([resetter(), ...Array.from({ length: WORKERS }, worker)])

    expect(destroyed).toBeGreaterThan(0)
    const unexpected = answers.filter((answer) => ![200, 201, 503].includes(answer.status))
    expect(unexpected.map((answer) => `${answer.status} ${answer.text}`)).toEqual([])
    for (const answer of answers.filter((answer) => answer.status === 503)) expectUnavailable(answer)
    expect(new Set(ids).size).toBe(KEYS)
    expect(await countPayouts(proxied.server, partner.integrationId)).toBe(KEYS)
  })
})

describe("a table lock held for long", () => {
  it("answers 503 after the lock timeout instead of waiting for the lock", async ({ proxied }) => {
    const partner = await newPartner(proxied.server)
    const lock = await holdLock(proxied.server.direct, "LOCK TABLE payouts IN ACCESS EXCLUSIVE MODE")
    let answer: TimedAnswer
    try {
      answer = await get(proxied, PAYOUTS, partner.apiKey)
    } finally {
      await lock.release()
    }
    expectUnavailable(answer)
    expect(answer.elapsedMs).toBeLessThan(BOUND_MS / 2)
    expect((await get(proxied, PAYOUTS, partner.apiKey)).status).toBe(200)
  })
})
