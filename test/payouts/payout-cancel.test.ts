/**
 * A partner cancels a payout the user abandoned (issue #29, part 4): while it awaits its deposit, the provider's
 * transfer is canceled and the payout is `expired` now (hop `expired` from `api`, `payout.expired`); again, the same
 * payout; after its deposit, 409. A confirm after the cancel answers as after an expiry (requote), and funds the
 * provider reports after the cancel are returned: `refunded`, `deposit_after_cancel`, never paid out.
 */
import { describe, expect } from "vitest"
import { decodePayout, expectError, newPartner, newTxHash, type Partner } from "../support/flows.ts"
import { httpTest } from "../support/fixture.ts"

const API = "/api/integrations"
const BREB = `${API}/breb`

// Confirmed payouts stay put (the mock lifecycle would move them on while these tests look).
const it = httpTest({ env: { MOCK_LIFECYCLE_DELAY_MS: "3600000" } })

const cancel = (partner: Partner, payoutId: string, headers?: Record<string, string>) =>
  partner.post(`${BREB}/payouts/${payoutId}/cancel`, undefined, headers)

const canceled = async (partner: Partner, payoutId: string) => {
  const wire = await cancel(partner, payoutId)
  expect(wire.status, wire.text).toBe(200)
  return decodePayout(wire.json)
}

const eventsOf = async (partner: Partner, payoutId: string) => {
  const wire = await partner.get(`${API}/events`, { limit: "500" })
  expect(wire.status, wire.text).toBe(200)
  return (wire.json as { items: ReadonlyArray<{ type: string; data: { object: unknown } }> }).items
    .filter((event) => (event.data.object as { payoutId?: string }).payoutId === payoutId)
    .map((event) => event.type)
}

describe("cancel a payout awaiting its deposit", () => {
  it("expires it now: expiresAt moved in, an expired hop from api, payout.expired; again, the same payout", async ({ partner, user }) => {
    const payout = await partner.payout(user)
    const before = Date.now()
    const first = await canceled(partner, payout.payoutId)
    expect(first.status).toBe("expired")
    expect(Date.parse(first.expiresAt)).toBeLessThan(Date.parse(payout.expiresAt))
    expect(Date.parse(first.expiresAt)).toBeGreaterThanOrEqual(before - 5_000)
    expect(first.timeline.at(-1)).toMatchObject({ status: "expired", source: "api" })
    expect(first.failure).toBeNull()
    expect(await eventsOf(partner, payout.payoutId)).toEqual(["payout.created", "payout.expired"])

    expect(await canceled(partner, payout.payoutId)).toEqual(first)
    expect(await eventsOf(partner, payout.payoutId)).toEqual(["payout.created", "payout.expired"])
  })

  it("a confirm after the cancel answers as after an expiry: 409 requote", async ({ partner, user }) => {
    const payout = await partner.payout(user)
    await canceled(partner, payout.payoutId)
    expectError(await partner.confirm(payout.payoutId, { txHash: newTxHash() }), 409, "requote")
  })

  it("funds the provider reports after the cancel are returned, not paid out: refunded, deposit_after_cancel", async ({ partner, user }) => {
    const payout = await partner.payout(user)
    await canceled(partner, payout.payoutId)
    const advanced = await partner.post(`${API}/test-helpers/payouts/${payout.payoutId}/advance`, { to: "refunded" })
    expect(advanced.status, advanced.text).toBe(200)
    const refunded = decodePayout(advanced.json)
    expect(refunded.status).toBe("refunded")
    expect(refunded.failure).toMatchObject({ code: "deposit_after_cancel", category: "deposit" })
    expect(refunded.refund).toMatchObject({ to: refunded.userAddress, token: "USDC" })
    expect(refunded.timeline.map((hop) => hop.status)).not.toContain("deposit_confirmed")
    expect(await eventsOf(partner, payout.payoutId)).toEqual(["payout.created", "payout.expired", "payout.refunded"])
  })
})

describe("a payout that can no longer be canceled", () => {
  it("409 once its deposit is confirmed, and the payout is untouched", async ({ partner, user }) => {
    const payout = await partner.payout(user)
    const confirmed = await partner.confirm(payout.payoutId, { txHash: newTxHash() })
    expect(confirmed.status, confirmed.text).toBe(200)
    const error = expectError(await cancel(partner, payout.payoutId), 409)
    expect(error).toContain("can no longer be canceled")
    expect(decodePayout((await partner.getPayout(payout.payoutId)).json).status).toBe("deposit_confirmed")
  })

  it("404 for an unknown payout and for another integration's, which stays awaiting its deposit", async ({ partner, server }) => {
    expectError(await cancel(partner, "po_doesnotexist"), 404)
    const owner = await newPartner(server)
    const theirs = await owner.payout(await owner.approvedUser())
    expectError(await cancel(partner, theirs.payoutId), 404)
    expect(decodePayout((await owner.getPayout(theirs.payoutId)).json).status).toBe("awaiting_deposit")
  })

  it("503 while the provider cannot be reached: nothing changes", async ({ partner, user }) => {
    const payout = await partner.payout(user)
    expectError(await cancel(partner, payout.payoutId, { "x-mock-scenario": "provider_unavailable" }), 503)
    expect(decodePayout((await partner.getPayout(payout.payoutId)).json).status).toBe("awaiting_deposit")
  })
})
