/**
 * Funds that arrive late (DESIGN §3, issue #18 item 1), in live mode against anvil and the provider simulator: the
 * user's deposit is mined inside the window, nobody confirms it, the sweep expires the payout, and only then does the
 * provider report the funds. The provider's word about money moves the expired payout forward with its events; the
 * reconciler asks about expired payouts for RECONCILE_EXPIRED_FOR_MS, so a lost webhook cannot leave a paid payout
 * `expired`; a transfer canceled for want of funds leaves it expired.
 *
 * The simulator waits for 2 confirmations before it credits a deposit, so a deposit's block alone is not seen: the
 * test mines the next block when it wants the provider to notice. The reconciler loop runs once at start and then
 * not for an hour (it cannot race the webhooks); the reconciler test ages its rows and runs it once itself.
 */
import type { Payout } from "@cop-integrations/contracts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { request, simEvents, waitUntil } from "../simulators/support.ts"
import { call, PAYOUTS, sql } from "../support/flows.ts"
import {
  eventsSettled,
  fundedPayout,
  type LiveStack,
  startLiveStack,
  transferIdOf,
  reconcileOnce
} from "../support/liveStack.ts"

let stack: LiveStack
let apiKey: string

beforeAll(async () => {
  stack = await startLiveStack({
    env: { EXPIRY_SWEEP_INTERVAL_MS: "100", RECONCILE_INTERVAL_MS: "3600000" },
    sim: { confirmations: 2 }
  })
  apiKey = await stack.newLiveKey()
}, 60_000)
afterAll(() => stack?.close())

const get = (path: string, query?: Record<string, string>) =>
  call(stack.server.baseUrl, apiKey, "GET", path, query === undefined ? {} : { query })

const payoutOf = async (payoutId: string) => (await get(`${PAYOUTS}/${payoutId}`)).json as any

const statusBecomes = (payoutId: string, status: string, timeoutMs = 15_000) =>
  waitUntil(`payout ${payoutId} ${status}`, async () => {
    const current = await payoutOf(payoutId)
    return current.status === status ? current : undefined
  }, { timeoutMs }).catch(async (error: Error) => {
    throw new Error(`${error.message} (it is ${(await payoutOf(payoutId)).status})`)
  })

const legs = (payout: any) => Object.fromEntries(payout.fees.map((leg: any) => [leg.code, leg.status]))

/** The partner's event list (GET /api/integrations/events), this payout's event types in order. */
const partnerEventTypes = async (payoutId: string) => {
  const wire = await get("/api/integrations/events", { limit: "500" })
  expect(wire.status, wire.text).toBe(200)
  return (wire.json as any).items
    .filter((event: any) => event.data.object.payoutId === payoutId)
    .map((event: any) => event.type)
}

/** The moment the block of `blockNumber` was mined. */
const minedAt = async (blockNumber: bigint) =>
  new Date(Number((await stack.anvil.client.getBlock({ blockNumber })).timestamp) * 1000)

/**
 * Closes the payout's deposit window just after `after` (and no earlier than now), so the sweep expires it with
 * the deposit mined inside the window. Anvil's block times may run ahead of the clock; the sweep then waits.
 */
const closeWindowAfter = (payoutId: string, after: Date) =>
  sql(
    stack.server,
    (q) =>
      q`UPDATE payouts SET expires_at = GREATEST(now(), ${new Date(
        after.getTime() + 1
      )}) WHERE id = ${payoutId} RETURNING id`
  )

/** The provider notices deposits one block after theirs (2 confirmations). */
const provideConfirmation = () => stack.anvil.client.mine({ blocks: 1 })

const transferStateOf = async (transferId: string) =>
  (await request(stack.sim, `/v0/transfers/${transferId}`)).body as {
    state: string
    receipt: { final_amount?: string } | null
  }

/** The simulator's state-change events about a transfer, once all `count` are settled (delivered or given up). */
const transferEvents = async (transferId: string, count: number) => {
  await eventsSettled(stack, "transfer", transferId, count)
  return (await simEvents(stack.sim, transferId)).filter((event) => event.event_category === "transfer")
}

describe("funds that arrive after the sweep (live)", () => {
  it("a deposit mined in the window, expired before the provider saw it: the provider's webhooks move it to completed", async () => {
    const { payout, user } = await fundedPayout(stack, apiKey)
    const transferId = await transferIdOf(stack, payout.payoutId)
    const deposit = await user.send(payout.transaction)
    const depositMinedAt = await minedAt(deposit.blockNumber)
    await closeWindowAfter(payout.payoutId, depositMinedAt)

    const expired = await statusBecomes(payout.payoutId, "expired")
    expect(Date.parse(expired.expiresAt)).toBeGreaterThan(depositMinedAt.getTime())
    expect(legs(expired)).toEqual({ bridge_fx: "quoted", bridge: "quoted", copby: "quoted" })
    expect((await transferStateOf(transferId)).state).toBe("awaiting_funds")

    await provideConfirmation()
    const events = await transferEvents(transferId, 3)
    expect(events.map((event) => event.event_object_status)).toEqual([
      "funds_received",
      "payment_submitted",
      "payment_processed"
    ])
    expect(events.every((event) => event.attempts.every((attempt) => attempt.status === 200))).toBe(true)

    const done = await statusBecomes(payout.payoutId, "completed")
    // As for a payout confirmed in time: the provider legs settle at completion, the service fee waits for its tx.
    expect(legs(done)).toEqual({ bridge_fx: "verified", bridge: "verified", copby: "pending" })
    expect(done.receipt.completedAt).not.toBeNull()
    expect(done.receipt.totalReceived.amount).toBe((await transferStateOf(transferId)).receipt?.final_amount)
    expect(done.txHash).toBeNull()
    expect(await partnerEventTypes(payout.payoutId)).toEqual([
      "payout.created",
      "payout.expired",
      "payout.deposit_confirmed",
      "payout.processing",
      "payout.completed"
    ])
    // The moment the provider reported the late deposit stays known.
    const [seen] = await sql<{ provider_deposit_seen_at: Date | null }>(
      stack.server,
      (q) => q`SELECT provider_deposit_seen_at FROM payouts WHERE id = ${payout.payoutId}`
    )
    expect(seen?.provider_deposit_seen_at?.getTime()).toBeGreaterThanOrEqual(Date.parse(expired.updatedAt))

    // The partner's confirm afterwards records the hashes (the provider saw the deposit) and moves nothing back.
    const fee = await user.send(payout.feeTransaction)
    const confirmed = await call(stack.server.baseUrl, apiKey, "POST", `${PAYOUTS}/${payout.payoutId}/confirm`, {
      body: { txHash: deposit.transactionHash, feeTxHash: fee.transactionHash }
    })
    expect(confirmed.status, confirmed.text).toBe(200)
    expect(confirmed.json).toMatchObject({
      status: "completed",
      txHash: deposit.transactionHash,
      feeTxHash: fee.transactionHash
    })
    expect(legs(confirmed.json)).toEqual({ bridge_fx: "verified", bridge: "verified", copby: "verified" })
    expect((await partnerEventTypes(payout.payoutId)).at(-1)).toBe("payout.completed")
    // The timeline: the deposit's block read from the chain at its own time, held between the payout's creation and
    // the confirm (anvil's blocks are whole seconds, often the payout's own, and its clock may run ahead); the rest
    // from who reported it.
    const timeline = (confirmed.json as Payout).timeline
    const mined = timeline.filter((hop) => hop.status === "deposit_mined")
    expect(mined).toEqual([
      { status: "deposit_mined", at: mined[0]?.at, source: "chain", blockTime: depositMinedAt.toISOString() }
    ])
    const createdAt = Date.parse(expired.createdAt)
    expect(Date.parse(mined[0]!.at)).toBeGreaterThanOrEqual(createdAt)
    expect(Date.parse(mined[0]!.at)).toBeLessThanOrEqual(Math.max(depositMinedAt.getTime(), createdAt))
    expect(timeline[0]!.status).toBe("created")
    expect(timeline.filter((hop) => hop.status !== "deposit_mined").map((hop) => [hop.status, hop.source])).toEqual([
      ["created", "api"],
      ["expired", "sweep"],
      ["funds_received", "provider_webhook"],
      ["deposit_confirmed", "provider_webhook"],
      ["processing", "provider_webhook"],
      ["completed", "provider_webhook"]
    ])
  })

  it("a transfer the provider cancels (no funds came) leaves the expired payout expired, with no event", async () => {
    const { payout } = await fundedPayout(stack, apiKey)
    const transferId = await transferIdOf(stack, payout.payoutId)
    await closeWindowAfter(payout.payoutId, new Date(0))
    const expired = await statusBecomes(payout.payoutId, "expired")

    await request(stack.sim, `/__sim/transfers/${transferId}/state`, { body: { state: "canceled" } })
    const [canceled] = await transferEvents(transferId, 1)
    expect(canceled?.attempts.map((attempt) => attempt.status)).toEqual([200])
    expect(await payoutOf(payout.payoutId)).toEqual(expired)
    expect(await partnerEventTypes(payout.payoutId)).toEqual(["payout.created", "payout.expired"])
  })

  it("webhooks lost: the reconciler asks about the expired payout and completes it; one expired over 24 h ago is not asked about", async () => {
    const recent = await fundedPayout(stack, apiKey)
    const old = await fundedPayout(stack, apiKey)
    const [recentTransfer, oldTransfer] = [
      await transferIdOf(stack, recent.payout.payoutId),
      await transferIdOf(stack, old.payout.payoutId)
    ]
    stack.sim.setWebhookUrl(null)
    try {
      for (const { payout, user } of [recent, old]) {
        const deposit = await user.send(payout.transaction)
        await closeWindowAfter(payout.payoutId, await minedAt(deposit.blockNumber))
      }
      await statusBecomes(recent.payout.payoutId, "expired")
      await statusBecomes(old.payout.payoutId, "expired")
      await provideConfirmation()
      for (const transferId of [recentTransfer, oldTransfer]) {
        const events = await transferEvents(transferId, 3)
        expect(events.every((event) => !event.delivered)).toBe(true)
        expect((await transferStateOf(transferId)).state).toBe("payment_processed")
      }

      // Nothing touched them for an hour (past RECONCILE_STALE_AFTER_MS); the old one's window closed 25 h ago.
      await sql(stack.server, (q) =>
        q`UPDATE payouts SET updated_at = now() - interval '1 hour', reconciled_at = NULL
          WHERE id IN (${recent.payout.payoutId}, ${old.payout.payoutId}) RETURNING id`)
      await sql(
        stack.server,
        (q) =>
          q`UPDATE payouts SET expires_at = now() - interval '25 hours', updated_at = now() - interval '25 hours'
          WHERE id = ${old.payout.payoutId} RETURNING id`
      )
      const asked = async () =>
        ((await request(stack.sim, "/__sim/requests")).body.data as Array<{ method: string; path: string }>)
          .filter((entry) => entry.method === "GET" && entry.path.startsWith("/v0/transfers/"))
          .map((entry) => entry.path)
      const askedBefore = (await asked()).length

      const report = await reconcileOnce(stack)
      expect(report).toMatchObject({ polled: 1, moved: 1, failed: 0 })
      expect((await asked()).slice(askedBefore)).toEqual([`/v0/transfers/${recentTransfer}`])

      const done = await payoutOf(recent.payout.payoutId)
      expect(done.status).toBe("completed")
      expect(legs(done)).toEqual({ bridge_fx: "verified", bridge: "verified", copby: "pending" })
      expect(done.receipt.totalReceived.amount).toBe((await transferStateOf(recentTransfer)).receipt?.final_amount)
      expect(await partnerEventTypes(recent.payout.payoutId)).toEqual([
        "payout.created",
        "payout.expired",
        "payout.deposit_confirmed",
        "payout.completed"
      ])
      expect((await payoutOf(old.payout.payoutId)).status).toBe("expired")
      expect(await partnerEventTypes(old.payout.payoutId)).toEqual(["payout.created", "payout.expired"])
    } finally {
      stack.sim.setWebhookUrl(`${stack.server.baseUrl}/api/integrations/webhooks/provider`)
    }
  })
})
