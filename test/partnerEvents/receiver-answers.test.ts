/**
 * What a receiver's answer does (#35, part 2). One that asks for time, a 429 or 503 with `Retry-After`, puts the next
 * attempt at least that far away, within the retry schedule's longest pause (6 hours); without one, the backoff applies
 * as before. One that answers 410 Gone disables its endpoint at once: its pending deliveries are given up and the
 * integration's other endpoints hear `endpoint.disabled`.
 */
import { once } from "node:events"
import { createServer, type Server } from "node:http"
import { afterAll, beforeAll, describe, expect, it as plain, vi } from "vitest"
import { nextAttemptDelayMs } from "../../src/partnerEvents/Delivery.ts"
import { retryAfterOf } from "../../src/partnerEvents/Sender.ts"
import { httpTest } from "../support/fixture.ts"
import { newPartner, sql } from "../support/flows.ts"
import { startReceiver } from "../support/webhookReceiver.ts"

// a backoff of milliseconds: whatever waits minutes does so because the receiver asked
const it = httpTest({ env: { WEBHOOK_RETRY_BASE_MS: "20" } })
const API = "/api/integrations"

let receiver: Server
let received = 0
/** What the receiver answers (always with `Retry-After: 120`). */
let status = 503
beforeAll(async () => {
  receiver = createServer((request, response) => {
    request.resume()
    received++
    response.writeHead(status, { "retry-after": "120", "content-type": "text/plain" }).end("busy")
  }).listen(0, "127.0.0.1")
  await once(receiver, "listening")
})
afterAll(() => receiver?.close())

const receiverUrl = (path: string) => `http://127.0.0.1:${(receiver.address() as { port: number }).port}${path}`

describe("Retry-After from a receiver", () => {
  it("a 503 with Retry-After: 120 puts the next attempt about two minutes away, not the backoff's milliseconds", async ({ server, partner }) => {
    status = 503
    const created = await partner.post(`${API}/webhook-endpoints`, {
      url: receiverUrl("/busy"),
      events: ["endpoint.ping"]
    })
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
    expect(received).toBeGreaterThanOrEqual(1)
    expect(waitSeconds).toBeGreaterThan(60)
    // `at` is the app's clock, now() the database's: a margin for the two
    expect(waitSeconds).toBeLessThanOrEqual(121)
  })
})

describe("410 Gone from a receiver", () => {
  it("disables the endpoint at once, gives up what was pending for it, and the other endpoints hear endpoint.disabled", async ({ server }) => {
    const partner = await newPartner(server)
    const watcher = await startReceiver()
    try {
      const listening = await partner.post(`${API}/webhook-endpoints`, {
        url: watcher.url,
        events: ["endpoint.disabled"]
      })
      expect(listening.status, listening.text).toBe(201)
      status = 410
      const created = await partner.post(`${API}/webhook-endpoints`, { url: receiverUrl("/gone"), events: ["*"] })
      const goneId = (created.json as { endpointId: string }).endpointId
      expect((await partner.post(`${API}/webhook-endpoints/${goneId}/ping`, {})).status).toBe(202)

      const disabled = await vi.waitFor(async () => {
        const read = await partner.get(`${API}/webhook-endpoints/${goneId}`)
        const endpoint = read.json as { status: string; disabledReason: string | null }
        if (endpoint.status !== "disabled") throw new Error("not disabled yet")
        return endpoint
      }, { timeout: 20_000, interval: 20 })
      expect(disabled.disabledReason).toMatch(/^disabled \S+: the receiver answered 410 Gone$/)
      const pending = await sql<{ n: number }>(
        server,
        (q) => q`SELECT count(*)::int AS n FROM event_deliveries WHERE endpoint_id = ${goneId} AND state = 'pending'`
      )
      expect(pending[0]?.n).toBe(0)

      const heard = await watcher.next((delivery) => delivery.event.type === "endpoint.disabled", 20_000)
      expect(heard.event.data.object).toMatchObject({ endpointId: goneId, status: "disabled" })
      const listed = await partner.get(`${API}/events`, { type: "endpoint.disabled", resourceId: goneId })
      expect((listed.json as { items: Array<unknown> }).items).toHaveLength(1)
    } finally {
      status = 503
      await watcher.close()
    }
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
