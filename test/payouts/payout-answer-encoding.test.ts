/**
 * A payout is answered as the presenter builds it (src/payouts/Present.ts), not encoded again through the contract's
 * schema: GET of one payout, its confirm, its cancel and a page of the list (src/http/BrebHttp.ts), as the create
 * is. That is right only while what the presenter builds is already the contract's encoding. For a payout in each
 * state the sandbox reaches, the answer must decode with the contract and encode back to the same JSON, no field
 * more, none less, none written otherwise.
 */
import { Payout, PayoutList } from "@cop-integrations/contracts"
import { describe, expect } from "vitest"
import { httpTest } from "../support/fixture.ts"
import {
  expectContractEncoding,
  expirePayoutWindow,
  newTxHash,
  type Partner,
  PAYOUTS,
  type Wire
} from "../support/flows.ts"

// The mock's lifecycle stays put: each payout is moved by the advance helper only.
const it = httpTest({ env: { MOCK_LIFECYCLE_DELAY_MS: "600000" } })

const ADVANCE = "/api/integrations/test-helpers/payouts"

const expectPayoutEncoding = (wire: Wire) => expectContractEncoding(Payout, wire)

const confirmed = async (partner: Partner, user: string) => {
  const payout = await partner.payout(user)
  expectPayoutEncoding(await partner.confirm(payout.payoutId, { txHash: newTxHash(), feeTxHash: newTxHash() }))
  return payout.payoutId
}

describe("one payout is answered in the contract's encoding", () => {
  it("awaiting its deposit, and deposit_confirmed with both hashes", async ({ partner, user }) => {
    const waiting = await partner.payout(user)
    expectPayoutEncoding(await partner.getPayout(waiting.payoutId))
    expectPayoutEncoding(await partner.getPayout(await confirmed(partner, user)))
  })

  for (const to of ["processing", "completed", "failed", "refunded"] as const) {
    it(`${to}, through the sandbox's advance helper`, async ({ partner, user }) => {
      const payoutId = await confirmed(partner, user)
      const advanced = await partner.post(`${ADVANCE}/${payoutId}/advance`, { to })
      expect(advanced.status, advanced.text).toBe(200)
      const answer = await partner.getPayout(payoutId)
      expectPayoutEncoding(answer)
      expect((answer.json as { status: string }).status).toBe(to)
    })
  }

  it("past its deposit window", async ({ server, partner, user }) => {
    const payout = await partner.payout(user)
    await expirePayoutWindow(server, payout.payoutId)
    expectPayoutEncoding(await partner.getPayout(payout.payoutId))
  })

  it("canceled, and canceled again", async ({ partner, user }) => {
    const payout = await partner.payout(user)
    expectPayoutEncoding(await partner.post(`${PAYOUTS}/${payout.payoutId}/cancel`, undefined))
    expectPayoutEncoding(await partner.post(`${PAYOUTS}/${payout.payoutId}/cancel`, undefined))
  })

  it("a page of the list is the contract's encoding too, its item the same as the GET", async ({ partner, user }) => {
    const payoutId = await confirmed(partner, user)
    const one = await partner.getPayout(payoutId)
    const page = await partner.get(PAYOUTS, { limit: "100" })
    expectContractEncoding(PayoutList, page)
    const listed = (page.json as { items: ReadonlyArray<{ payoutId: string }> }).items.find((item) =>
      item.payoutId === payoutId
    )
    expect(listed).toEqual(one.json)
  })
})
