/**
 * Idle loops sleep long and still start new work at once: a commit that adds a webhook delivery (or a job) notifies
 * `work_available` (migration 0012) and the listening replica wakes. Here the idle interval is ten minutes, so an
 * event can only arrive within the receiver's wait if the notification woke the delivery loop. (Without the trigger
 * the first event waits for the idle poll and this test fails.)
 */
import { describe, expect } from "vitest"
import { httpTest } from "../support/fixture.ts"
import { receiverForTests } from "../support/webhookReceiver.ts"

const it = httpTest({ env: { JOBS_IDLE_INTERVAL_MS: "600000", MOCK_LIFECYCLE_DELAY_MS: "50" } })

const receiver = receiverForTests()

describe("work notifications", () => {
  it("wake the idle delivery loop and job worker when new work commits", async ({ partner, user }) => {
    const endpoint = await partner.post("/api/integrations/webhook-endpoints", { url: receiver.url })
    expect(endpoint.status, endpoint.text).toBe(201)
    const payout = await partner.payout(user)
    // the delivery loop, idle since start-up, is woken by the commit that wrote payout.created's delivery
    await receiver.next(
      (d) => d.event.type === "payout.created" && d.event.data.object["payoutId"] === payout.payoutId,
      15_000
    )
    // the job worker likewise: the mock lifecycle's jobs (queued by the confirm) move the payout to completed
    const confirmed = await partner.confirm(payout.payoutId, {
      txHash: `0x${"c".repeat(40)}${Date.now().toString(16).padStart(24, "0")}`
    })
    expect(confirmed.status, confirmed.text).toBe(200)
    await receiver.next(
      (d) => d.event.type === "payout.completed" && d.event.data.object["payoutId"] === payout.payoutId,
      15_000
    )
  })
})
