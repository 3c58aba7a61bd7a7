/**
 * A refund the provider `sent` is looked for onchain by the reconciler (issue #29 part 3) and, once found, becomes
 * `verified` with a `refunded` hop saying so. Mock mode: the advance helper's refund transaction is the mock chain's,
 * which verifies (source `mock_chain`). The reconciler runs every 100 ms here.
 */
import type { Payout } from "@cop-integrations/contracts"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { BREB, call, createConfirmedPayout } from "../support/http.ts"
import { startTestServer, type TestServer } from "../support/server.ts"

let server: TestServer
let apiKey: string

beforeAll(async () => {
  server = await startTestServer({ env: { MOCK_LIFECYCLE_DELAY_MS: "600000", RECONCILE_INTERVAL_MS: "100" } })
  ;({ apiKey } = await server.newIntegration())
})
afterAll(() => server?.close())

const payoutOf = async (payoutId: string) => {
  const answer = await call(server, `${BREB}/payouts/${payoutId}`, { apiKey })
  expect(answer.status, answer.text).toBe(200)
  return answer.body as Payout
}

describe("a refund sent", () => {
  it("the advance helper's refund reaches verified, on the timeline once, its amount and transaction kept", async () => {
    const payout = (await createConfirmedPayout(server, apiKey)) as unknown as Payout
    const advanced = await call(server, `/api/integrations/test-helpers/payouts/${payout.payoutId}/advance`, {
      apiKey,
      method: "POST",
      body: { to: "refunded" }
    })
    expect(advanced.status, advanced.text).toBe(200)
    const sent = (advanced.body as Payout).refund!
    const verified = await vi.waitFor(async () => {
      const current = await payoutOf(payout.payoutId)
      expect(current.refund?.status).toBe("verified")
      return current
    }, { timeout: 15_000, interval: 50 })
    expect(verified.status).toBe("refunded")
    expect(verified.refund).toMatchObject({
      to: sent.to,
      token: "USDC",
      amount: sent.amount,
      retained: sent.retained,
      txHash: sent.txHash
    })
    const refundHops = verified.timeline.filter((hop) => hop.refundStatus !== undefined)
    expect(refundHops.map((hop) => [hop.refundStatus, hop.source])).toEqual([
      ["sent", "test_helper"],
      ["verified", "mock_chain"]
    ])
  })
})
