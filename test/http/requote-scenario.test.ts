/**
 * `X-Mock-Scenario: requote`: the exact 409 bodies, and where the scenario stands among the other checks of payout
 * creation and of a confirm (payout and swap). A confirm refused by it claims no hash; a replay is still a replay.
 */
import { describe, expect } from "vitest"
import { httpTest } from "../support/fixture.ts"
import {
  BREB,
  call,
  countPayouts,
  newAddress,
  newTxHash,
  type Partner,
  payoutBody,
  sql,
  type Wire
} from "../support/flows.ts"
import type { TestServer } from "../support/server.ts"

const SWAPS = "/api/integrations/swaps"
const REQUOTE = { "x-mock-scenario": "requote" }
const PRICE_GONE = { error: "the quote is no longer valid (mock scenario): quote again", errorCode: "requote" }
const WINDOW_CLOSED = {
  error: "the deposit window has closed (mock scenario): create a new payout",
  errorCode: "requote"
}

// The mock lifecycle would move confirmed payouts on while a test looks at them.
const it = httpTest({ env: { MOCK_LIFECYCLE_DELAY_MS: "3600000" } })

const answer = (wire: Wire) => ({ status: wire.status, body: wire.json })
const requote = (body: typeof PRICE_GONE) => ({ status: 409, body })
const codeOf = (wire: Wire) => ({ status: wire.status, errorCode: (wire.json as { errorCode?: string }).errorCode })

const claimsOf = (server: TestServer, hash: string) =>
  sql<{ resource_id: string; state: string }>(
    server,
    (q) => q`SELECT resource_id, state FROM tx_hash_claims WHERE tx_hash = ${hash}`
  )

/** A confirm of `resourceId` verifying another hash, as a confirm that has not finished leaves it. */
const verifyingElsewhere = (server: TestServer, kind: "payout" | "swap", resourceId: string) =>
  sql(
    server,
    (q) =>
      q`INSERT INTO tx_hash_claims (tx_hash, resource_kind, resource_id, state)
        VALUES (${newTxHash()}, ${kind}, ${resourceId}, 'verifying') RETURNING tx_hash`
  )

const prepareSwap = async (partner: Partner) => {
  const prepared = await partner.post(SWAPS, {
    userAddress: newAddress(),
    fromToken: "USDC",
    toToken: "COPm",
    amountIn: "8"
  })
  expect(prepared.status, prepared.text).toBe(201)
  return (prepared.json as { intentId: string }).intentId
}

const confirmSwap = (partner: Partner, intentId: string, txHash: string, headers?: Record<string, string>) =>
  partner.post(`${SWAPS}/${intentId}/confirm`, { txHash }, headers)

describe("X-Mock-Scenario: requote on payout creation", () => {
  it("is one exact 409 body, and writes no payout", async ({ server, partner, user }) => {
    const before = await countPayouts(server, partner.integrationId)
    const created = await partner.createPayout(payoutBody(user), REQUOTE)
    expect(answer(created)).toEqual(requote(PRICE_GONE))
    const withKey = await partner.createPayout(payoutBody(user), { ...REQUOTE, "idempotency-key": `rq-${newTxHash()}` })
    expect(answer(withKey)).toEqual(requote(PRICE_GONE))
    expect(await countPayouts(server, partner.integrationId)).toBe(before)
  })

  it("comes after the input, the preview and KYC; before the quoteId, the price and the destination", async ({ partner, user }) => {
    // before it: 400 on the body, 400 on a previewId, needs_kyc
    expect(codeOf(await partner.createPayout(payoutBody(user, { breBKey: "not a key" }), REQUOTE)).status).toBe(400)
    expect(codeOf(await partner.createPayout(payoutBody(user, { previewId: "pv_none" }), REQUOTE)).status).toBe(400)
    expect(codeOf(await partner.createPayout(payoutBody(newAddress()), REQUOTE))).toEqual({
      status: 409,
      errorCode: "needs_kyc"
    })
    // after it: an unknown quoteId (400), a quote for another amount (requote of its own), below_minimum,
    // destination_mismatch
    const quote = await partner.get(`${BREB}/quote`, { destinationCop: "100000" })
    expect(quote.status, quote.text).toBe(200)
    const quoteId = (quote.json as { quoteId: string }).quoteId
    for (
      const overrides of [
        { quoteId: "qt_does_not_exist" },
        { quoteId, destinationCop: "110000" },
        { destinationCop: "100" },
        { accountOwnerName: "Mismatch" }
      ]
    ) {
      expect(answer(await partner.createPayout(payoutBody(user, overrides), REQUOTE))).toEqual(requote(PRICE_GONE))
    }
  })

  it("leaves the quote and a swap's prepare alone", async ({ server, partner }) => {
    const quote = await call(server.baseUrl, partner.apiKey, "GET", `${BREB}/quote`, {
      query: { destinationCop: "250000" },
      headers: REQUOTE
    })
    expect(quote.status, quote.text).toBe(200)
    const swap = await partner.post(SWAPS, {
      userAddress: newAddress(),
      fromToken: "USDC",
      toToken: "COPm",
      amountIn: "8"
    }, REQUOTE)
    expect(swap.status, swap.text).toBe(201)
  })
})

describe("X-Mock-Scenario: requote on a payout confirm", () => {
  it("is one exact 409 body and claims no hash; the same hash confirms without it", async ({ server, partner, user }) => {
    const payout = await partner.payout(user)
    const txHash = newTxHash()
    const feeTxHash = newTxHash()
    const refused = await partner.confirm(payout.payoutId, { txHash, feeTxHash }, REQUOTE)
    expect(answer(refused)).toEqual(requote(WINDOW_CLOSED))
    expect(await claimsOf(server, txHash)).toEqual([])
    expect(await claimsOf(server, feeTxHash)).toEqual([])
    const confirmed = await partner.confirm(payout.payoutId, { txHash, feeTxHash })
    expect(confirmed.status, confirmed.text).toBe(200)
  })

  it("comes after the payout's own checks (a replay still replays) and before the hash's", async ({ server, partner, user }) => {
    // a replay: the same hash again answers the payout unchanged
    const done = await partner.payout(user)
    const doneHash = newTxHash()
    const first = await partner.confirm(done.payoutId, { txHash: doneHash })
    expect(first.status, first.text).toBe(200)
    const replayed = await partner.confirm(done.payoutId, { txHash: doneHash }, REQUOTE)
    expect(replayed.status, replayed.text).toBe(200)
    expect(replayed.json).toEqual(first.json)
    // already confirmed with another hash: a plain 409
    expect(codeOf(await partner.confirm(done.payoutId, { txHash: newTxHash() }, REQUOTE))).toEqual({
      status: 409,
      errorCode: undefined
    })
    // another confirm of the payout in progress: a plain 409
    const busy = await partner.payout(user)
    await verifyingElsewhere(server, "payout", busy.payoutId)
    expect(codeOf(await partner.confirm(busy.payoutId, { txHash: newTxHash() }, REQUOTE))).toEqual({
      status: 409,
      errorCode: undefined
    })
    // a payout that takes no confirm: a plain 409
    const closed = await partner.payout(user)
    await sql(server, (q) => q`UPDATE payouts SET status = 'failed' WHERE id = ${closed.payoutId} RETURNING id`)
    expect(codeOf(await partner.confirm(closed.payoutId, { txHash: newTxHash() }, REQUOTE))).toEqual({
      status: 409,
      errorCode: undefined
    })
    // a hash (or fee hash) another payout holds: requote, and the claim stays the other payout's
    const fresh = await partner.payout(user)
    const used = await claimsOf(server, doneHash)
    expect(answer(await partner.confirm(fresh.payoutId, { txHash: doneHash }, REQUOTE))).toEqual(
      requote(WINDOW_CLOSED)
    )
    expect(answer(await partner.confirm(fresh.payoutId, { txHash: newTxHash(), feeTxHash: doneHash }, REQUOTE)))
      .toEqual(requote(WINDOW_CLOSED))
    expect(await claimsOf(server, doneHash)).toEqual(used)
  })
})

describe("X-Mock-Scenario: requote on a swap confirm", () => {
  it("is the same exact 409 body, claims no hash, and stands after the swap's checks, before the hash's", async ({ server, partner }) => {
    const intentId = await prepareSwap(partner)
    const txHash = newTxHash()
    expect(answer(await confirmSwap(partner, intentId, txHash, REQUOTE))).toEqual(requote(WINDOW_CLOSED))
    expect(await claimsOf(server, txHash)).toEqual([])
    const confirmed = await confirmSwap(partner, intentId, txHash)
    expect(confirmed.status, confirmed.text).toBe(200)
    // a replay still replays; another hash on a confirmed swap is a plain 409
    const replayed = await confirmSwap(partner, intentId, txHash, REQUOTE)
    expect(replayed.status, replayed.text).toBe(200)
    expect(replayed.json).toEqual(confirmed.json)
    expect(codeOf(await confirmSwap(partner, intentId, newTxHash(), REQUOTE))).toEqual({
      status: 409,
      errorCode: undefined
    })
    // another confirm of the swap in progress: a plain 409
    const busy = await prepareSwap(partner)
    await verifyingElsewhere(server, "swap", busy)
    expect(codeOf(await confirmSwap(partner, busy, newTxHash(), REQUOTE))).toEqual({
      status: 409,
      errorCode: undefined
    })
    // a hash the first swap holds: requote, and the claim stays the first swap's
    const used = await claimsOf(server, txHash)
    expect(answer(await confirmSwap(partner, await prepareSwap(partner), txHash, REQUOTE))).toEqual(
      requote(WINDOW_CLOSED)
    )
    expect(await claimsOf(server, txHash)).toEqual(used)
  })
})
