/**
 * The reconciler asks about payouts still in flight before the expired ones it keeps watching for late funds (DESIGN
 * §3): expired payouts pile up (most never see funds), and in one oldest-first queue they pushed a stuck `processing`
 * payout behind them for as long as there were more of them than a batch.
 */
import { Effect } from "effect"
import { describe, expect } from "vitest"
import { httpTest } from "../support/fixture.ts"
import type { TestServer } from "../support/server.ts"
import { makeReconciler } from "../../src/worker/Reconciler.ts"
import { pollPayout, sql } from "../support/flows.ts"

// one payout a run, and runs only when the test asks (the loop's next one is an hour away)
const it = httpTest({
  env: { RECONCILE_INTERVAL_MS: "3600000", RECONCILE_BATCH_SIZE: "1", EXPIRY_SWEEP_INTERVAL_MS: "100" }
})

const reconcileOnce = (server: TestServer) =>
  (server.run as <A, E>(effect: Effect.Effect<A, E, unknown>) => Promise<A>)(
    Effect.flatMap(makeReconciler, (reconciler) => reconciler.run)
  )

const reconciledAt = async (server: TestServer, payoutId: string) => {
  const [row] = await sql<{ reconciled_at: Date | null }>(
    server,
    (q) => q`SELECT reconciled_at FROM payouts WHERE id = ${payoutId}`
  )
  return row?.reconciled_at ?? null
}

describe("reconciler: which payout a batch takes first", () => {
  it("a payout in flight before an expired one, though the expired one has waited longer", async ({ server, partner, user }) => {
    const expired = await partner.payout(user)
    await sql(
      server,
      (q) => q`UPDATE payouts SET expires_at = now() - interval '1 minute' WHERE id = ${expired.payoutId} RETURNING id`
    )
    await pollPayout(partner, expired.payoutId, (p) => p.status === "expired", 10_000)
    const inFlight = await partner.payout(user)
    await sql(
      server,
      (q) =>
        q`UPDATE payouts SET updated_at = now() - CASE WHEN id = ${expired.payoutId} THEN interval '2 hours' ELSE interval '1 hour' END,
                          reconciled_at = NULL
        WHERE id IN (${expired.payoutId}, ${inFlight.payoutId}) RETURNING id`
    )

    const report = await reconcileOnce(server)
    expect(report.polled).toBe(1)
    expect(await reconciledAt(server, inFlight.payoutId)).toBeInstanceOf(Date)
    expect(await reconciledAt(server, expired.payoutId)).toBeNull()

    // the next run takes the expired one
    await reconcileOnce(server)
    expect(await reconciledAt(server, expired.payoutId)).toBeInstanceOf(Date)
  })
})
