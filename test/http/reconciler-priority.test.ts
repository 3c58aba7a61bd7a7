/**
 * The reconciler asks about payouts still in flight before the expired ones it keeps watching for late funds (DESIGN
 * §3): expired payouts pile up (most never see funds), and in one oldest-first queue they pushed a stuck `processing`
 * payout behind them for as long as there were more of them than a batch.
 */
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeReconciler } from "../../src/worker/Reconciler.ts"
import { newPartner, type Partner, pollPayout, sql } from "../support/flows.ts"
import { startTestServer, type TestServer } from "../support/server.ts"

let server: TestServer
let partner: Partner
let user: `0x${string}`

beforeAll(async () => {
  // one payout a run, and runs only when the test asks (the loop's next one is an hour away)
  server = await startTestServer({
    env: { RECONCILE_INTERVAL_MS: "3600000", RECONCILE_BATCH_SIZE: "1", EXPIRY_SWEEP_INTERVAL_MS: "100" }
  })
  partner = await newPartner(server)
  user = await partner.approvedUser()
})
afterAll(() => server?.close())

const reconcileOnce = () =>
  (server.run as <A, E>(effect: Effect.Effect<A, E, unknown>) => Promise<A>)(
    Effect.flatMap(makeReconciler, (reconciler) => reconciler.run)
  )

const reconciledAt = async (payoutId: string) => {
  const [row] = await sql<{ reconciled_at: Date | null }>(
    server,
    (q) => q`SELECT reconciled_at FROM payouts WHERE id = ${payoutId}`
  )
  return row?.reconciled_at ?? null
}

describe("reconciler: which payout a batch takes first", () => {
  it("a payout in flight before an expired one, though the expired one has waited longer", async () => {
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

    const report = await reconcileOnce()
    expect(report.polled).toBe(1)
    expect(await reconciledAt(inFlight.payoutId)).toBeInstanceOf(Date)
    expect(await reconciledAt(expired.payoutId)).toBeNull()

    // the next run takes the expired one
    await reconcileOnce()
    expect(await reconciledAt(expired.payoutId)).toBeInstanceOf(Date)
  })
})
