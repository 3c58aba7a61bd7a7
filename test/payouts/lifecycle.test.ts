import type { Payout, PayoutStatus } from "@cop-integrations/contracts"
import { SqlClient } from "effect/sql"
import { Effect } from "effect"
import { describe, expect, vi } from "vitest"
import { httpTest } from "../support/fixture.ts"
import type { TestServer } from "../support/server.ts"
import { Lifecycle } from "../../src/payouts/Lifecycle.ts"
import { bridgeProgress } from "../../src/provider/bridge/TransferStates.ts"
import {
  decodePayout,
  expectError,
  expirePayoutWindow,
  newTxHash,
  type Partner,
  pollPayout,
  runApp,
  sql
} from "../support/flows.ts"

const it = httpTest()

const FORWARD: ReadonlyArray<PayoutStatus> = ["awaiting_deposit", "deposit_confirmed", "processing", "completed"]

const current = async (partner: Partner, payoutId: string) => decodePayout((await partner.getPayout(payoutId)).json)

const confirm = async (partner: Partner, payoutId: string, body: Record<string, string>) => {
  const wire = await partner.confirm(payoutId, body)
  expect(wire.status, wire.text).toBe(200)
  return decodePayout(wire.json)
}

const legStatus = (payout: Payout) => Object.fromEntries(payout.fees.map((leg) => [leg.code, leg.status]))

/** Applies a provider transfer state the way a webhook would (in a transaction, row locked). */
const applyProviderState = async (server: TestServer, payoutId: string, state: string) => {
  const [row] = await sql<{ provider_transfer_id: string }>(
    server,
    (q) => q`SELECT provider_transfer_id FROM payouts WHERE id = ${payoutId}`
  )
  expect(row).toBeDefined()
  return runApp(
    server,
    Effect.gen(function*() {
      const sqlClient = yield* SqlClient.SqlClient
      const lifecycle = yield* Lifecycle
      return yield* sqlClient.withTransaction(
        lifecycle.applyTransferProgress({
          progress: bridgeProgress({ id: row!.provider_transfer_id, state }),
          source: "provider_webhook"
        })
      )
    })
  )
}

/**
 * The payout's events in the outbox, in the order they were written: by sequence. (Not by created_at: a sweep that
 * read its clock before this test's payout existed can expire it once the test backdates its window, stamping the
 * event before `payout.created`; in production a window ends long after creation.)
 */
const eventTypes = async (server: TestServer, payoutId: string) =>
  (await sql<{ type: string }>(
    server,
    (q) => q`SELECT type FROM events WHERE resource_id = ${payoutId} ORDER BY sequence`
  ))
    .map((row) => row.type)

/** When the provider reported the payout's deposit (null: it has not). */
const depositSeenAt = async (server: TestServer, payoutId: string) =>
  (await sql<{ provider_deposit_seen_at: Date | null }>(
    server,
    (q) => q`SELECT provider_deposit_seen_at FROM payouts WHERE id = ${payoutId}`
  ))[0]?.provider_deposit_seen_at

describe("mock lifecycle", () => {
  it("moves a confirmed payout to processing, then completed, by itself", async ({ partner, user }) => {
    const payout = await partner.payout(user)
    const confirmedAt = Date.now()
    const confirmed = await confirm(partner, payout.payoutId, { txHash: newTxHash() })
    expect(confirmed.status).toBe("deposit_confirmed")

    const { payout: done, seen } = await pollPayout(partner, payout.payoutId, (p) => p.status === "completed")

    // statuses observed in order, never backwards, through processing
    const ranks = seen.map((status) => FORWARD.indexOf(status as PayoutStatus))
    expect(ranks.every((rank) => rank >= 1)).toBe(true)
    expect([...ranks].sort((a, b) => a - b)).toEqual(ranks)
    expect(seen).toContain("processing")

    expect(done.receipt.status).toBe("completed")
    expect(done.receipt.completedAt).not.toBeNull()
    const completedAt = Date.parse(done.receipt.completedAt!)
    expect(completedAt).toBeGreaterThanOrEqual(Date.parse(confirmed.updatedAt))
    expect(completedAt).toBeGreaterThanOrEqual(confirmedAt - 1000)
    expect(Date.parse(done.updatedAt)).toBeGreaterThanOrEqual(completedAt)
    // provider legs settle; the service fee leg stays pending without a feeTxHash
    expect(legStatus(done)).toEqual({ bridge_fx: "verified", bridge: "verified", copby: "pending" })
    expect(done.receipt.feesItemized).toEqual(done.fees)
    // everything else is as prepared
    expect(done.sourceAmount).toBe(payout.sourceAmount)
    expect(done.txHash).toBe(confirmed.txHash)
  })

  it("keeps a verified copby leg verified through completion", async ({ partner, user }) => {
    const payout = await partner.payout(user)
    await confirm(partner, payout.payoutId, { txHash: newTxHash(), feeTxHash: newTxHash() })
    const { payout: done } = await pollPayout(partner, payout.payoutId, (p) => p.status === "completed")
    expect(legStatus(done)).toEqual({ bridge_fx: "verified", bridge: "verified", copby: "verified" })
  })

  it("leaves an unconfirmed payout awaiting its deposit", async ({ partner, user }) => {
    const idle = await partner.payout(user)
    // a payout confirmed after it, run to completion, bounds the time the worker had
    const witness = await partner.payout(user)
    await confirm(partner, witness.payoutId, { txHash: newTxHash() })
    await pollPayout(partner, witness.payoutId, (p) => p.status === "completed")
    expect(await current(partner, idle.payoutId)).toEqual(idle)
  })

  it("expires an unconfirmed payout whose window has passed (sweep), and refuses its confirmation", async ({ server, partner, user }) => {
    const payout = await partner.payout(user)
    const other = await partner.payout(user)
    expect(await expirePayoutWindow(server, payout.payoutId)).toHaveLength(1)

    const { payout: expired } = await pollPayout(partner, payout.payoutId, (p) => p.status === "expired")
    expect(expired.receipt.status).toBe("expired")
    expect(expired.receipt.completedAt).toBeNull()
    expect(expired.txHash).toBeNull()
    expect(Date.parse(expired.updatedAt)).toBeGreaterThanOrEqual(Date.parse(payout.updatedAt))
    expectError(await partner.confirm(payout.payoutId, { txHash: newTxHash() }), 409, "requote")
    // the sweep touched only the overdue payout
    expect((await current(partner, other.payoutId)).status).toBe("awaiting_deposit")
  })

  it("only moves forward: late provider states do not change a completed payout", async ({ server, partner, user }) => {
    const payout = await partner.payout(user)
    await confirm(partner, payout.payoutId, { txHash: newTxHash() })
    const { payout: done } = await pollPayout(partner, payout.payoutId, (p) => p.status === "completed")

    for (const late of ["funds_received", "payment_submitted", "payment_processed", "error"]) {
      expect(await applyProviderState(server, payout.payoutId, late)).toBe(false)
      expect(await current(partner, payout.payoutId)).toEqual(done)
    }
  })

  it("an expired payout stays expired while no funds reached the provider (canceled, error, awaiting, unknown)", async ({ server, partner, user }) => {
    const payout = await partner.payout(user)
    await expirePayoutWindow(server, payout.payoutId)
    const { payout: expired } = await pollPayout(partner, payout.payoutId, (p) => p.status === "expired")
    for (const state of ["canceled", "error", "awaiting_funds", "in_review", "some_state_added_later"]) {
      expect(await applyProviderState(server, payout.payoutId, state)).toBe(false)
      expect(await current(partner, payout.payoutId)).toEqual(expired)
    }
    expect(await eventTypes(server, payout.payoutId)).toEqual(["payout.created", "payout.expired"])
  })

  it("funds that arrive late: the provider's word moves an expired payout forward, each step with its event, never back", async ({ server, partner, user }) => {
    const payout = await partner.payout(user)
    await expirePayoutWindow(server, payout.payoutId)
    const { payout: expired } = await pollPayout(partner, payout.payoutId, (p) => p.status === "expired")

    expect(await applyProviderState(server, payout.payoutId, "payment_submitted")).toBe(true)
    const processing = await current(partner, payout.payoutId)
    expect(processing.status).toBe("processing")
    expect(legStatus(processing)).toEqual({ bridge_fx: "pending", bridge: "pending", copby: "pending" })
    expect(await depositSeenAt(server, payout.payoutId)).toBeInstanceOf(Date)
    // late and duplicated events move nothing back
    for (const late of ["funds_received", "payment_submitted", "awaiting_funds"]) {
      expect(await applyProviderState(server, payout.payoutId, late), late).toBe(false)
    }
    expect(await current(partner, payout.payoutId)).toEqual(processing)
    expect(await eventTypes(server, payout.payoutId)).toEqual([
      "payout.created",
      "payout.expired",
      "payout.deposit_confirmed",
      "payout.processing"
    ])
    expect(Date.parse(processing.updatedAt)).toBeGreaterThanOrEqual(Date.parse(expired.updatedAt))
  })

  it("funds that arrive late: payment_processed completes an expired payout, the provider legs verified", async ({ server, partner, user }) => {
    const payout = await partner.payout(user)
    await expirePayoutWindow(server, payout.payoutId)
    await pollPayout(partner, payout.payoutId, (p) => p.status === "expired")
    expect(await applyProviderState(server, payout.payoutId, "payment_processed")).toBe(true)
    const done = await current(partner, payout.payoutId)
    expect(done.status).toBe("completed")
    expect(done.receipt.completedAt).not.toBeNull()
    expect(legStatus(done)).toEqual({ bridge_fx: "verified", bridge: "verified", copby: "pending" })
    expect(await eventTypes(server, payout.payoutId)).toEqual([
      "payout.created",
      "payout.expired",
      "payout.deposit_confirmed",
      "payout.completed"
    ])
    // The partner's confirm is heard (the provider saw the deposit): it records the hash, the status stays.
    const txHash = newTxHash()
    const confirmed = await confirm(partner, payout.payoutId, { txHash })
    expect(confirmed).toMatchObject({ status: "completed", txHash })
  })

  it("applies a provider state that moves forward, once", async ({ server, partner, user }) => {
    const payout = await partner.payout(user)
    const confirmed = await confirm(partner, payout.payoutId, { txHash: newTxHash() })
    // jump ahead of the scheduled mock steps; they then have nothing left to do
    expect(await applyProviderState(server, payout.payoutId, "payment_processed")).toBe(true)
    const done = await current(partner, payout.payoutId)
    expect(done.status).toBe("completed")
    expect(done.receipt.completedAt).not.toBeNull()
    expect(Date.parse(done.receipt.completedAt!)).toBeGreaterThanOrEqual(Date.parse(confirmed.updatedAt))
    expect(await applyProviderState(server, payout.payoutId, "payment_processed")).toBe(false)
    // once the scheduled steps have run, nothing has moved
    await waitForJobsDone(server, payout.payoutId)
    expect(await current(partner, payout.payoutId)).toEqual(done)
  })
})

/** Waits (bounded) until every scheduled job of the payout's transfer has been carried out. */
const waitForJobsDone = async (server: TestServer, payoutId: string) => {
  await vi.waitFor(async () => {
    const [row] = await sql<{ pending: number; total: number }>(
      server,
      (q) =>
        q`SELECT count(*) FILTER (WHERE j.done_at IS NULL)::int AS pending, count(*)::int AS total
          FROM jobs j JOIN payouts p ON j.payload->>'transferId' = p.provider_transfer_id
          WHERE p.id = ${payoutId}`
    )
    expect(row?.total).toBeGreaterThan(0)
    expect(row?.pending).toBe(0)
  }, { timeout: 15_000, interval: 20 })
}
