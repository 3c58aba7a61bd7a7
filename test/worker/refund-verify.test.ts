/**
 * A refund the provider `sent` is looked for onchain by the reconciler (issue #29 part 3) and, once found, becomes
 * `verified` with a `refunded` hop saying so. Mock mode: the advance helper's refund transaction is the mock chain's,
 * which verifies (source `mock_chain`). The reconciler runs every 100 ms here.
 */
import type { Payout } from "@cop-integrations/contracts"
import { describe, expect, vi } from "vitest"
import { httpTest } from "../support/fixture.ts"
import type { TestServer } from "../support/server.ts"
import type { Partner } from "../support/flows.ts"
import { BREB, call, createConfirmedPayout } from "../support/http.ts"

const it = httpTest({ env: { MOCK_LIFECYCLE_DELAY_MS: "600000", RECONCILE_INTERVAL_MS: "100" } })

const payoutOf = async (server: TestServer, partner: Partner, payoutId: string) => {
  const answer = await call(server, `${BREB}/payouts/${payoutId}`, { apiKey: partner.apiKey })
  expect(answer.status, answer.text).toBe(200)
  return answer.body as Payout
}

describe("a refund sent", () => {
  it("the advance helper's refund reaches verified, on the timeline once, its amount and transaction kept", async ({ server, partner }) => {
    const payout = (await createConfirmedPayout(server, partner.apiKey)) as unknown as Payout
    const advanced = await call(server, `/api/integrations/test-helpers/payouts/${payout.payoutId}/advance`, {
      apiKey: partner.apiKey,
      method: "POST",
      body: { to: "refunded" }
    })
    expect(advanced.status, advanced.text).toBe(200)
    const sent = (advanced.body as Payout).refund!
    const verified = await vi.waitFor(async () => {
      const current = await payoutOf(server, partner, payout.payoutId)
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
