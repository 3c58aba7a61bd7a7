/**
 * What the provider's webhooks can do wrong, in live mode against the simulator: events delivered twice and out of
 * order never move a payout back; events the service never accepts (signed with a stale timestamp on every
 * attempt, so the provider gives up) do not strand it: the reconciler asks the provider and converges.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { request, simEvents, waitUntil } from "../simulators/support.ts"
import { call, PAYOUTS } from "../support/flows.ts"
import { eventsSettled, fundedPayout, type LiveStack, startLiveStack, transferIdOf } from "../support/liveStack.ts"

let stack: LiveStack
let apiKey: string

beforeAll(async () => {
  stack = await startLiveStack({
    env: { RECONCILE_INTERVAL_MS: "200", RECONCILE_STALE_AFTER_MS: "1000" },
    sim: { webhookMaxAttempts: 2, webhookBackoffMs: [20] }
  })
  apiKey = await stack.newLiveKey()
}, 60_000)
afterAll(() => stack?.close())

const statusOf = async (
  payoutId: string
) => ((await call(stack.server.baseUrl, apiKey, "GET", `${PAYOUTS}/${payoutId}`)).json as any)

/** A funded payout; `faults` are switched on after KYC (so they hit only the transfer's events), then it is paid and confirmed. */
const payAndConfirm = async (faults: () => Promise<unknown>) => {
  const { payout, user } = await fundedPayout(stack, apiKey)
  await faults()
  const deposit = await user.send(payout.transaction)
  const fee = await user.send(payout.feeTransaction)
  const confirmed = await call(stack.server.baseUrl, apiKey, "POST", `${PAYOUTS}/${payout.payoutId}/confirm`, {
    body: { txHash: deposit.transactionHash, feeTxHash: fee.transactionHash }
  })
  expect(confirmed.status, confirmed.text).toBe(200)
  return payout
}

const completed = (payoutId: string, timeoutMs = 15_000) =>
  waitUntil(`payout ${payoutId} completed`, async () => {
    const current = await statusOf(payoutId)
    return current.status === "completed" ? current : undefined
  }, { timeoutMs })

describe("provider webhooks in live mode", () => {
  it("duplicated and out-of-order transfer events: each applied once, the payout only moves forward to completed", async () => {
    const payout = await payAndConfirm(async () => {
      await request(stack.sim, "/__sim/faults/duplicates", { body: { count: 20 } })
      await request(stack.sim, "/__sim/faults/out-of-order", { body: { count: 3 } })
    })
    const transferId = await transferIdOf(stack, payout.payoutId)
    const events = await eventsSettled(stack, "transfer", transferId, 3)
    const done = await completed(payout.payoutId)
    expect(done.fees.every((leg: any) => leg.status === "verified")).toBe(true)
    // Each event arrived twice and every delivery was answered 2xx (the second as a duplicate, changing nothing).
    const deliveries = (await simEvents(stack.sim, transferId)).filter((event) => event.event_category === "transfer")
    expect(deliveries.some((event) => event.reason === "duplicate")).toBe(true)
    expect(events.every((event) => event.attempts.every((attempt) => attempt.status === 200))).toBe(true)
    await request(stack.sim, "/__sim/faults", { method: "DELETE" })
  })

  it("events the service never accepts (stale signatures until the provider gives up): the reconciler completes the payout", async () => {
    const payout = await payAndConfirm(() => request(stack.sim, "/__sim/faults/stale", { body: { count: 50 } }))
    const transferId = await transferIdOf(stack, payout.payoutId)
    const events = await eventsSettled(stack, "transfer", transferId, 3)
    expect(events.every((event) => !event.delivered)).toBe(true)
    const done = await completed(payout.payoutId)
    expect(done.status).toBe("completed")
    await request(stack.sim, "/__sim/faults", { method: "DELETE" })
  })
})
