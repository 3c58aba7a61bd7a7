/**
 * A receiver that asks for time (#35, part 2): a 429 or 503 with `Retry-After` puts the next attempt at least that far
 * away, within the retry schedule's longest pause (6 hours); without one, the backoff applies as before.
 */
import { once } from "node:events"
import { createServer, type Server } from "node:http"
import { afterAll, beforeAll, describe, expect, it as plain, vi } from "vitest"
import { nextAttemptDelayMs } from "../../src/partnerEvents/Delivery.ts"
import { retryAfterOf } from "../../src/partnerEvents/Sender.ts"
import { httpTest } from "../support/fixture.ts"
import { sql } from "../support/flows.ts"

// a backoff of milliseconds: whatever waits minutes does so because the receiver asked
const it = httpTest({ env: { WEBHOOK_RETRY_BASE_MS: "20" } })
const API = "/api/integrations"

let receiver: Server
const retryAfter = "120"
let received = 0
beforeAll(async () => {
  receiver = createServer((request, response) => {
    request.resume()
    received++
    response.writeHead(503, { "retry-after": retryAfter, "content-type": "text/plain" }).end("busy")
  }).listen(0, "127.0.0.1")
  await once(receiver, "listening")
})
afterAll(() => receiver?.close())

describe("Retry-After from a receiver", () => {
  it("a 503 with Retry-After: 120 puts the next attempt about two minutes away, not the backoff's milliseconds", async ({ server, partner }) => {
    const url = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hooks`
    const created = await partner.post(`${API}/webhook-endpoints`, { url, events: ["endpoint.ping"] })
    expect(created.status, created.text).toBe(201)
    const endpointId = (created.json as { endpointId: string }).endpointId
    expect((await partner.post(`${API}/webhook-endpoints/${endpointId}/ping`, {})).status).toBe(202)
    const waitSeconds = await vi.waitFor(async () => {
      // once the attempt is recorded: the delivery's next attempt was set in the same transaction
      const [row] = await sql<{ wait: number | null }>(
        server,
        (q) =>
          q`SELECT extract(epoch FROM d.next_attempt_at - now())::float8 AS wait
            FROM event_deliveries d
            WHERE d.endpoint_id = ${endpointId} AND d.state = 'pending'
              AND EXISTS (SELECT 1 FROM event_delivery_attempts a WHERE a.endpoint_id = ${endpointId})`
      )
      if (row === undefined || row.wait === null) throw new Error("no attempt recorded yet")
      return row.wait
    }, { timeout: 20_000, interval: 20 })
    expect(received).toBe(1)
    expect(waitSeconds).toBeGreaterThan(60)
    expect(waitSeconds).toBeLessThanOrEqual(120)
  })
})

plain("Retry-After is read as delta-seconds or an HTTP date, and bounded by the schedule's longest pause", () => {
  const now = Date.parse("2026-11-29T10:00:00Z")
  expect(retryAfterOf("120", now)).toBe(120)
  expect(retryAfterOf(" 7 ", now)).toBe(7)
  expect(retryAfterOf("Sun, 29 Nov 2026 10:01:30 GMT", now)).toBe(90)
  for (const unreadable of ["-5", "1.5", "soon", "", undefined]) expect(retryAfterOf(unreadable, now)).toBeUndefined()
  // the backoff (attempt 1, base 5 s, jitter at its top: 5 s) unless the receiver asks for longer, at most 6 hours
  expect(nextAttemptDelayMs(1, 5_000, undefined, 1)).toBe(5_000)
  expect(nextAttemptDelayMs(1, 5_000, 2, 1)).toBe(5_000)
  expect(nextAttemptDelayMs(1, 5_000, 120, 1)).toBe(120_000)
  expect(nextAttemptDelayMs(1, 5_000, 10 * 86_400, 1)).toBe(6 * 3_600_000)
})
