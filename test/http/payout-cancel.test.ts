/**
 * A partner cancels a payout the user abandoned (issue #29, part 4): while it awaits its deposit, the provider's
 * transfer is canceled and the payout is `expired` now (hop `expired` from `api`, `payout.expired`); again, the same
 * payout; after its deposit, 409. A confirm after the cancel answers as after an expiry (requote), and funds the
 * provider reports after the cancel are returned: `refunded`, `deposit_after_cancel`, never paid out.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { decodePayout, expectError, newPartner, newTxHash, type Partner } from "../support/flows.ts"
import { startTestServer, type TestServer } from "../support/server.ts"

const API = "/api/integrations"
const BREB = `${API}/breb`

let server: TestServer
let partner: Partner
let user: `0x${string}`

beforeAll(async () => {
  // Confirmed payouts stay put (the mock lifecycle would move them on while these tests look).
  server = await startTestServer({ env: { MOCK_LIFECYCLE_DELAY_MS: "3600000" } })
  partner = await newPartner(server)
  user = await partner.approvedUser()
})
afterAll(() => server?.close())

const cancel = (payoutId: string, owner: Partner = partner, headers?: Record<string, string>) =>
  owner.post(`${BREB}/payouts/${payoutId}/cancel`, undefined, headers)

const canceled = async (payoutId: string) => {
  const wire = await cancel(payoutId)
  expect(wire.status, wire.text).toBe(200)
  return decodePayout(wire.json)
}

const eventsOf = async (payoutId: string) => {
  const wire = await partner.get(`${API}/events`, { limit: "500" })
  expect(wire.status, wire.text).toBe(200)
  return (wire.json as { items: ReadonlyArray<{ type: string; data: { object: unknown } }> }).items
    .filter((event) => (event.data.object as { payoutId?: string }).payoutId === payoutId)
    .map((event) => event.type)
}

describe("cancel a payout awaiting its deposit", () => {
  it("expires it now: expiresAt moved in, an expired hop from api, payout.expired; again, the same payout", async () => {
    const payout = await partner.payout(user)
    const before = Date.now()
    const first = await canceled(payout.payoutId)
    expect(first.status).toBe("expired")
    expect(Date.parse(first.expiresAt)).toBeLessThan(Date.parse(payout.expiresAt))
    expect(Date.parse(first.expiresAt)).toBeGreaterThanOrEqual(before - 5_000)
    expect(first.timeline.at(-1)).toMatchObject({ status: "expired", source: "api" })
    expect(first.failure).toBeNull()
    expect(await eventsOf(payout.payoutId)).toEqual(["payout.created", "payout.expired"])

    expect(await canceled(payout.payoutId)).toEqual(first)
    expect(await eventsOf(payout.payoutId)).toEqual(["payout.created", "payout.expired"])
  })

  it("a confirm after the cancel answers as after an expiry: 409 requote", async () => {
    const payout = await partner.payout(user)
    await canceled(payout.payoutId)
    expectError(await partner.confirm(payout.payoutId, { txHash: newTxHash() }), 409, "requote")
  })

  it("funds the provider reports after the cancel are returned, not paid out: refunded, deposit_after_cancel", async () => {
    const payout = await partner.payout(user)
    await canceled(payout.payoutId)
    const advanced = await partner.post(`${API}/test-helpers/payouts/${payout.payoutId}/advance`, { to: "refunded" })
    expect(advanced.status, advanced.text).toBe(200)
    const refunded = decodePayout(advanced.json)
    expect(refunded.status).toBe("refunded")
    expect(refunded.failure).toMatchObject({ code: "deposit_after_cancel", category: "deposit" })
    expect(refunded.refund).toMatchObject({ to: refunded.userAddress, token: "USDC" })
    expect(refunded.timeline.map((hop) => hop.status)).not.toContain("deposit_confirmed")
    expect(await eventsOf(payout.payoutId)).toEqual(["payout.created", "payout.expired", "payout.refunded"])
  })
})

describe("a payout that can no longer be canceled", () => {
  it("409 once its deposit is confirmed, and the payout is untouched", async () => {
    const payout = await partner.payout(user)
    const confirmed = await partner.confirm(payout.payoutId, { txHash: newTxHash() })
    expect(confirmed.status, confirmed.text).toBe(200)
    const error = expectError(await cancel(payout.payoutId), 409)
    expect(error).toContain("can no longer be canceled")
    expect(decodePayout((await partner.getPayout(payout.payoutId)).json).status).toBe("deposit_confirmed")
  })

  it("404 for an unknown payout and for another integration's, which stays awaiting its deposit", async () => {
    expectError(await cancel("po_doesnotexist"), 404)
    const owner = await newPartner(server)
    const theirs = await owner.payout(await owner.approvedUser())
    expectError(await cancel(theirs.payoutId), 404)
    expect(decodePayout((await owner.getPayout(theirs.payoutId)).json).status).toBe("awaiting_deposit")
  })

  it("503 while the provider cannot be reached: nothing changes", async () => {
    const payout = await partner.payout(user)
    expectError(await cancel(payout.payoutId, partner, { "x-mock-scenario": "provider_unavailable" }), 503)
    expect(decodePayout((await partner.getPayout(payout.payoutId)).json).status).toBe("awaiting_deposit")
  })
})
