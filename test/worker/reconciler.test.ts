/**
 * The reconciler (issue #7): it releases txHash claims a crashed confirm left `verifying`, and asks the provider
 * about payouts that stopped moving, applying the transfer's state the way a webhook would. The app runs over a
 * test provider whose `getTransfer` answers what each test scripts, and whose deposits never progress on their
 * own (no mock lifecycle); the reconciler loop runs every 100 ms, the tests age rows instead of waiting.
 */
import { Duration, Effect, Layer } from "effect"
import { describe, expect, vi } from "vitest"
import { httpTest } from "../support/fixture.ts"
import { mockModeWith } from "../support/mockModeWith.ts"
import { Outbox } from "../../src/outbox/Outbox.ts"
import type { TestServer } from "../support/server.ts"
import { ConfirmWait } from "../../src/chain/ConfirmByTxHash.ts"
import { makeReconciler } from "../../src/worker/Reconciler.ts"
import { PayoutProvider, ProviderUnavailable } from "../../src/provider/PayoutProvider.ts"
import { bridgeProgress } from "../../src/provider/bridge/TransferStates.ts"
import { ProviderMock } from "../../src/provider/mock/ProviderMock.ts"
import { decodePayout, expectError, newTxHash, type Partner, pollPayout, sql } from "../support/flows.ts"

/** What the provider says about each transfer; "down": it cannot be reached. Unknown transfers await funds. */
const transferStates = new Map<string, string>()
/** Transfers the reconciler asked about (every call). */
const asked: Array<string> = []

const ScriptedProvider = Layer.effect(
  PayoutProvider,
  Effect.map(PayoutProvider, (mock) =>
    PayoutProvider.of({
      ...mock,
      getTransfer: (transferId) =>
        Effect.suspend(() => {
          asked.push(transferId)
          const state = transferStates.get(transferId) ?? "awaiting_funds"
          return state === "down"
            ? Effect.fail(new ProviderUnavailable({ reason: "scripted outage" }))
            : Effect.succeed(bridgeProgress({ id: transferId, state }))
        })
    }))
).pipe(Layer.provide(ProviderMock))

const it = httpTest({
  env: { RECONCILE_INTERVAL_MS: "100" },
  // a confirm waits this long for a verifying claim of its own hash before 409
  overrides: Layer.succeed(ConfirmWait, Duration.millis(300)),
  // the scripted provider's transfers move only as the test says
  app: mockModeWith({ provider: ScriptedProvider, outbox: Outbox.Default })
})

const transferOf = async (server: TestServer, payoutId: string) => {
  const [row] = await sql<{ provider_transfer_id: string }>(
    server,
    (q) => q`SELECT provider_transfer_id FROM payouts WHERE id = ${payoutId}`
  )
  return row!.provider_transfer_id
}

/** Makes the payout look untouched for an hour (longer than RECONCILE_STALE_AFTER_MS). */
const ageOneHour = (server: TestServer, payoutId: string) =>
  sql(
    server,
    (q) =>
      q`UPDATE payouts SET updated_at = now() - interval '1 hour', reconciled_at = NULL WHERE id = ${payoutId} RETURNING id`
  )

const confirmOk = async (partner: Partner, payoutId: string, txHash: string) => {
  const wire = await partner.confirm(payoutId, { txHash })
  expect(wire.status, wire.text).toBe(200)
  return decodePayout(wire.json)
}

const claimsOf = (server: TestServer, hash: string) =>
  sql<{ resource_id: string; state: string }>(
    server,
    (q) => q`SELECT resource_id, state FROM tx_hash_claims WHERE tx_hash = ${hash}`
  )

/** One reconciler run now, on the app's services (beside the loop; both take turns through onOneReplica). */
const reconcileOnce = (server: TestServer) =>
  (server.run as <A, E>(effect: Effect.Effect<A, E, unknown>) => Promise<A>)(
    Effect.flatMap(makeReconciler, (reconciler) => reconciler.run)
  )

describe("reconciler: txHash claims left verifying", () => {
  it("releases a stale verifying claim (a confirm that crashed), so the partner can confirm again; nothing else", async ({ server, partner, user }) => {
    const payout = await partner.payout(user)
    const [crashed, fresh, settled] = [newTxHash(), newTxHash(), newTxHash()]
    const other = await partner.payout(user)
    // A confirm that claimed its hash and crashed before the chain check: the payout is in progress meanwhile.
    await sql(server, (q) =>
      q`INSERT INTO tx_hash_claims (tx_hash, resource_kind, resource_id, state)
        VALUES (${crashed}, 'payout', ${payout.payoutId}, 'verifying'),
               (${fresh}, 'payout', ${other.payoutId}, 'verifying'),
               (${settled}, 'payout', 'po_settled_elsewhere', 'claimed') RETURNING tx_hash`)
    expect(expectError(await partner.confirm(payout.payoutId, { txHash: crashed }), 409)).toMatch(
      /still being verified/
    )

    // It ages past RECONCILE_CLAIM_STALE_AFTER_MS (as does the settled one, which stays).
    await sql(server, (q) =>
      q`UPDATE tx_hash_claims SET claimed_at = now() - interval '1 hour'
        WHERE tx_hash IN (${crashed}, ${settled}) RETURNING tx_hash`)
    await vi.waitFor(async () => expect(await claimsOf(server, crashed)).toEqual([]), { timeout: 10_000, interval: 25 })
    expect(await claimsOf(server, fresh)).toEqual([{ resource_id: other.payoutId, state: "verifying" }])
    expect(await claimsOf(server, settled)).toEqual([{ resource_id: "po_settled_elsewhere", state: "claimed" }])

    expect((await confirmOk(partner, payout.payoutId, crashed)).txHash).toBe(crashed)
    expect(await claimsOf(server, crashed)).toEqual([{ resource_id: payout.payoutId, state: "claimed" }])
  })
})

describe("reconciler: payouts a lost webhook left behind", () => {
  it("completes a payout stuck in deposit_confirmed whose transfer the provider reports payment_processed", async ({ server, partner, user }) => {
    const payout = await partner.payout(user)
    await confirmOk(partner, payout.payoutId, newTxHash())
    const transferId = await transferOf(server, payout.payoutId)
    transferStates.set(transferId, "payment_processed")
    await ageOneHour(server, payout.payoutId)

    const { payout: done } = await pollPayout(partner, payout.payoutId, (p) => p.status === "completed", 10_000)
    expect(done.receipt.completedAt).not.toBeNull()
    expect(Object.fromEntries(done.fees.map((leg) => [leg.code, leg.status])))
      .toEqual({ bridge_fx: "verified", bridge: "verified", copby: "pending" })
    expect(asked).toContain(transferId)
    // The reconciler's finding is on the timeline: what the lost webhook would have said, from the reconciler.
    // (Unchanged for an hour, the payout may also have been reported delayed meanwhile.)
    expect(done.timeline.filter((hop) => hop.status !== "delayed").map((hop) => [hop.status, hop.source])).toEqual([
      ["created", "api"],
      ["deposit_mined", "mock_chain"],
      ["deposit_confirmed", "api"],
      ["funds_received", "reconciler"],
      ["completed", "reconciler"]
    ])
  })

  it("moves an awaiting_deposit payout whose provider saw the funds, and the partner's confirm still records its hash", async ({ server, partner, user }) => {
    const payout = await partner.payout(user)
    const transferId = await transferOf(server, payout.payoutId)
    transferStates.set(transferId, "funds_received")
    await ageOneHour(server, payout.payoutId)

    await pollPayout(partner, payout.payoutId, (p) => p.status === "deposit_confirmed", 10_000)
    const txHash = newTxHash()
    expect((await confirmOk(partner, payout.payoutId, txHash)).txHash).toBe(txHash)
  })

  it("does not ask about a payout updated recently", async ({ server, partner, user }) => {
    const payout = await partner.payout(user)
    await confirmOk(partner, payout.payoutId, newTxHash())
    const transferId = await transferOf(server, payout.payoutId)
    transferStates.set(transferId, "payment_processed")

    await reconcileOnce(server)
    expect(asked).not.toContain(transferId)
    expect(decodePayout((await partner.getPayout(payout.payoutId)).json).status).toBe("deposit_confirmed")
  })

  it("logs and skips a transfer the provider cannot tell about; the rest of the batch still moves", async ({ server, partner, user }) => {
    const [down, fine] = [await partner.payout(user), await partner.payout(user)]
    for (const payout of [down, fine]) await confirmOk(partner, payout.payoutId, newTxHash())
    const [downTransfer, fineTransfer] = [
      await transferOf(server, down.payoutId),
      await transferOf(server, fine.payoutId)
    ]
    transferStates.set(downTransfer, "down")
    transferStates.set(fineTransfer, "payment_submitted")
    await ageOneHour(server, down.payoutId)
    await ageOneHour(server, fine.payoutId)

    await pollPayout(partner, fine.payoutId, (p) => p.status === "processing", 10_000)
    await vi.waitFor(() => expect(asked).toContain(downTransfer), { timeout: 10_000, interval: 25 })
    expect(decodePayout((await partner.getPayout(down.payoutId)).json).status).toBe("deposit_confirmed")
    // Stamped as asked: the next attempt waits for RECONCILE_STALE_AFTER_MS, the others get their turn.
    const [row] = await sql<{ reconciled_at: Date | null }>(
      server,
      (q) => q`SELECT reconciled_at FROM payouts WHERE id = ${down.payoutId}`
    )
    expect(row?.reconciled_at).toBeInstanceOf(Date)
    const report = await reconcileOnce(server)
    expect(report.polled).toBe(0)
  })
})

describe("reconciler: expired payouts whose funds may arrive late (DESIGN §3)", () => {
  /** Expired `hoursAgo` (its window closed then), swept, and untouched since (past RECONCILE_STALE_AFTER_MS). */
  /** The provider's word on the transfer is scripted before the payout becomes one the reconciler asks about. */
  const expiredHoursAgo = async (
    server: TestServer,
    partner: Partner,
    user: `0x${string}`,
    hoursAgo: number,
    providerSays: string
  ) => {
    const payout = await partner.payout(user)
    await sql(
      server,
      (q) =>
        q`UPDATE payouts SET expires_at = now() - make_interval(hours => ${hoursAgo}) - interval '1 minute'
        WHERE id = ${payout.payoutId} RETURNING id`
    )
    await pollPayout(partner, payout.payoutId, (p) => p.status === "expired", 10_000)
    const transferId = await transferOf(server, payout.payoutId)
    transferStates.set(transferId, providerSays)
    await ageOneHour(server, payout.payoutId)
    return { payout, transferId }
  }

  it("asks about a payout expired less than 24 h ago and moves it on the provider's word that the funds came", async ({ server, partner, user }) => {
    const paid = await expiredHoursAgo(server, partner, user, 23, "payment_processed")

    const { payout: done } = await pollPayout(partner, paid.payout.payoutId, (p) => p.status === "completed", 10_000)
    expect(Object.fromEntries(done.fees.map((leg) => [leg.code, leg.status])))
      .toEqual({ bridge_fx: "verified", bridge: "verified", copby: "pending" })
    expect(asked).toContain(paid.transferId)
  })

  it("leaves an expired payout whose transfer was canceled (no funds) expired, stamped as asked (asked again after RECONCILE_STALE_AFTER_MS)", async ({ server, partner, user }) => {
    const canceled = await expiredHoursAgo(server, partner, user, 0, "canceled")

    await vi.waitFor(() => expect(asked).toContain(canceled.transferId), { timeout: 10_000, interval: 25 })
    expect(decodePayout((await partner.getPayout(canceled.payout.payoutId)).json).status).toBe("expired")
    const [row] = await sql<{ reconciled_at: Date | null }>(
      server,
      (q) => q`SELECT reconciled_at FROM payouts WHERE id = ${canceled.payout.payoutId}`
    )
    expect(row?.reconciled_at).toBeInstanceOf(Date)
  })

  it("does not ask about a payout expired more than 24 h ago", async ({ server, partner, user }) => {
    const old = await expiredHoursAgo(server, partner, user, 25, "payment_processed")
    // a payout asked about after it bounds the time the reconciler had
    const witness = await expiredHoursAgo(server, partner, user, 1, "payment_processed")

    await pollPayout(partner, witness.payout.payoutId, (p) => p.status === "completed", 10_000)
    await reconcileOnce(server)
    expect(asked).not.toContain(old.transferId)
    expect(decodePayout((await partner.getPayout(old.payout.payoutId)).json).status).toBe("expired")
  })
})
