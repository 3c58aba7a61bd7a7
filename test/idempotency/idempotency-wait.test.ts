/**
 * DESIGN §3 Idempotency-Key: a duplicate that arrives while the first request is still running waits
 * for it, and gets 409 only if the first does not finish within the wait (10 s; 1 s here). The first
 * request itself is not bounded by that wait: it completes normally, and exactly one payout exists.
 *
 * The first request is made slow deterministically: a transaction outside the app holds a SHARE lock
 * on `payouts`, so its INSERT waits until the test releases the lock, after the duplicate has answered.
 */
import { Duration, Layer } from "effect"
import { describe, expect, vi } from "vitest"
import { httpTest } from "../support/fixture.ts"
import { IdempotencyWait } from "../../src/idempotency/IdempotencyStore.ts"
import { countPayouts, decodePayout, expectError, newPartner, payoutBody } from "../support/flows.ts"
import { holdLock, lockWaiters } from "../support/locks.ts"

const it = httpTest({ overrides: Layer.succeed(IdempotencyWait, Duration.seconds(1)) })

describe("Idempotency-Key while the first request is still running", () => {
  it("the first completes (201), a duplicate gets 409 after the wait, a later retry replays; one payout", async ({ server }) => {
    const partner = await newPartner(server)
    const body = payoutBody(await partner.approvedUser())
    const headers = { "idempotency-key": `slow-${crypto.randomUUID()}` }

    const lock = await holdLock(server.direct, "LOCK TABLE payouts IN SHARE MODE")
    let first: ReturnType<typeof partner.createPayout> | undefined
    try {
      first = partner.createPayout(body, headers)
      await vi.waitFor(async () => expect(await lockWaiters(server.direct, "INSERT INTO payouts")).toBe(1), {
        timeout: 15_000,
        interval: 20
      })
      const started = performance.now()
      const duplicate = await partner.createPayout(body, headers)
      expectError(duplicate, 409)
      expect(performance.now() - started).toBeGreaterThanOrEqual(900)
      expect(duplicate.json).toEqual({ error: expect.stringContaining("still in progress") })
    } finally {
      await lock.release()
    }

    const created = await first
    expect(created.status, created.text).toBe(201)
    expect(created.headers.get("idempotent-replayed")).toBeNull()
    expect(await countPayouts(server, partner.integrationId)).toBe(1)

    const retry = await partner.createPayout(body, headers)
    expect(retry.status, retry.text).toBe(201)
    expect(retry.headers.get("idempotent-replayed")).toBe("true")
    expect(retry.text).toBe(created.text)
    expect(decodePayout(retry.json).payoutId).toBe(decodePayout(created.json).payoutId)
  })
})
