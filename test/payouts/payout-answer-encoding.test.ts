/**
 * A payout is answered as the presenter builds it (src/payouts/Present.ts), not encoded again through the contract's
 * schema: GET of one payout, its confirm and its cancel (src/http/BrebHttp.ts), like the list and the create. That is right only while what the
 * presenter builds is already the contract's encoding. For a payout in each state the sandbox reaches, the answer
 * must decode with the contract and encode back to the same JSON, no field more, none less, none written otherwise.
 */
import { Payout } from "@cop-integrations/contracts"
import { Schema } from "effect"
import { describe, expect } from "vitest"
import { httpTest } from "../support/fixture.ts"
import { expirePayoutWindow, newTxHash, type Partner, PAYOUTS, type Wire } from "../support/flows.ts"

// The mock's lifecycle stays put: each payout is moved by the advance helper only.
const it = httpTest({ env: { MOCK_LIFECYCLE_DELAY_MS: "600000" } })

const ADVANCE = "/api/integrations/test-helpers/payouts"

/** The answer's JSON, and the contract's encoding of what it decodes to. */
const asContractEncodes = (wire: Wire) => {
  const decoded = Schema.decodeUnknownSync(Payout)(wire.json)
  return { answered: wire.json, encoded: JSON.parse(JSON.stringify(Schema.encodeSync(Payout)(decoded))) }
}

const expectContractEncoding = (wire: Wire) => {
  expect(wire.status, wire.text).toBe(200)
  const { answered, encoded } = asContractEncodes(wire)
  expect(answered).toEqual(encoded)
}

const confirmed = async (partner: Partner, user: string) => {
  const payout = await partner.payout(user)
  expectContractEncoding(await partner.confirm(payout.payoutId, { txHash: newTxHash(), feeTxHash: newTxHash() }))
  return payout.payoutId
}

describe("one payout is answered in the contract's encoding", () => {
  it("awaiting its deposit, and deposit_confirmed with both hashes", async ({ partner, user }) => {
    const waiting = await partner.payout(user)
    expectContractEncoding(await partner.getPayout(waiting.payoutId))
    expectContractEncoding(await partner.getPayout(await confirmed(partner, user)))
  })

  for (const to of ["processing", "completed", "failed", "refunded"] as const) {
    it(`${to}, through the sandbox's advance helper`, async ({ partner, user }) => {
      const payoutId = await confirmed(partner, user)
      const advanced = await partner.post(`${ADVANCE}/${payoutId}/advance`, { to })
      expect(advanced.status, advanced.text).toBe(200)
      const answer = await partner.getPayout(payoutId)
      expectContractEncoding(answer)
      expect((answer.json as { status: string }).status).toBe(to)
    })
  }

  it("past its deposit window", async ({ server, partner, user }) => {
    const payout = await partner.payout(user)
    await expirePayoutWindow(server, payout.payoutId)
    expectContractEncoding(await partner.getPayout(payout.payoutId))
  })

  it("canceled, and canceled again", async ({ partner, user }) => {
    const payout = await partner.payout(user)
    expectContractEncoding(await partner.post(`${PAYOUTS}/${payout.payoutId}/cancel`, undefined))
    expectContractEncoding(await partner.post(`${PAYOUTS}/${payout.payoutId}/cancel`, undefined))
  })

  it("the same payout in the list is answered the same", async ({ partner, user }) => {
    const payoutId = await confirmed(partner, user)
    const one = await partner.getPayout(payoutId)
    const page = await partner.get(PAYOUTS, { limit: "100" })
    const listed = (page.json as { items: ReadonlyArray<{ payoutId: string }> }).items.find((item) =>
      item.payoutId === payoutId
    )
    expect(listed).toEqual(one.json)
  })
})
