/**
 * The database stalls: sockets stay open but no byte comes back (a partition, a frozen server, a
 * failover whose old sessions vanished without a RST). Requests must answer 503 within the query
 * timeout instead of hanging, /readyz must answer quickly, and once the database is reachable again
 * the service must work without a restart: the stalled connections are thrown away, not reused.
 */
import { describe, expect, vi } from "vitest"
import { expectError, newPartner, PAYOUTS, payoutBody } from "../support/flows.ts"
import { type ProxiedServer, proxiedTest, timedCall } from "../support/resilience.ts"

const it = proxiedTest()

const BOUND_MS = 15_000

const get = (proxied: ProxiedServer, path: string, apiKey?: string) =>
  timedCall(proxied.server.baseUrl, path, { boundMs: BOUND_MS, ...(apiKey === undefined ? {} : { apiKey }) })

describe("the database stalls", () => {
  it("answers 503 within the timeouts instead of hanging, and works again after the stall without a restart", async ({ proxied }) => {
    const partner = await newPartner(proxied.server)
    const user = await partner.approvedUser()

    proxied.proxy.setMode("stall")

    const [listed, created, ready] = await Promise.all([
      get(proxied, PAYOUTS, partner.apiKey),
      timedCall(proxied.server.baseUrl, PAYOUTS, {
        apiKey: partner.apiKey,
        body: payoutBody(user),
        headers: { "idempotency-key": `stalled-${crypto.randomUUID()}` },
        boundMs: BOUND_MS
      }),
      get(proxied, "/readyz")
    ])
    expectError(listed, 503)
    expectError(created, 503)
    expectError(ready, 503)
    expect(ready.elapsedMs).toBeLessThan(4_000)

    proxied.proxy.setMode("pass")
    await vi.waitFor(async () => {
      const answer = await get(proxied, PAYOUTS, partner.apiKey)
      expect(answer.status, answer.text).toBe(200)
    }, { timeout: 20_000, interval: 50 })
    expect((await get(proxied, "/readyz")).status).toBe(200)
    const again = await timedCall(proxied.server.baseUrl, PAYOUTS, {
      apiKey: partner.apiKey,
      body: payoutBody(user),
      boundMs: BOUND_MS
    })
    expect(again.status, again.text).toBe(201)
  })
})
