import { NotFound, PayoutId, TxHash, TxHashReused } from "@cop-integrations/contracts"
import { Cause, Exit, Option } from "effect"
import { describe, expect } from "vitest"
import { httpTest } from "../support/fixture.ts"
import {
  decodePayout,
  expectBadRequest,
  expectError,
  expirePayoutWindow,
  mixedHex,
  newPartner,
  newTxHash,
  type Partner,
  pollPayout,
  upperHex
} from "../support/flows.ts"
import { clientExit } from "../support/server.ts"

// The mock lifecycle (tested in lifecycle.test.ts) would move confirmed payouts on while these tests
// compare them; push it out of this file's lifetime. The expiry sweep still runs every 25 ms.
const it = httpTest({ env: { MOCK_LIFECYCLE_DELAY_MS: "3600000" } })

/** Confirms and asserts 200; returns the decoded payout. */
const confirmed = async (owner: Partner, payoutId: string, body: Record<string, string>) => {
  const wire = await owner.confirm(payoutId, body)
  expect(wire.status, wire.text).toBe(200)
  return decodePayout(wire.json)
}

const failureOf = <A, E>(exit: Exit.Exit<A, E>): E | undefined =>
  Exit.isFailure(exit) ? Option.getOrUndefined(Cause.findErrorOption(exit.cause)) : undefined

const legStatus = (payout: { readonly fees: ReadonlyArray<{ readonly code: string; readonly status: string }> }) =>
  Object.fromEntries(payout.fees.map((leg) => [leg.code, leg.status]))

describe("POST /payouts/{id}/confirm", () => {
  it("confirms the deposit and stores the hash lower-cased", async ({ partner, user }) => {
    const payout = await partner.payout(user)
    const txHash = newTxHash()
    const result = await confirmed(partner, payout.payoutId, { txHash: upperHex(txHash) })
    expect(result.payoutId).toBe(payout.payoutId)
    expect(result.status).toBe("deposit_confirmed")
    expect(result.receipt.status).toBe("deposit_confirmed")
    expect(result.txHash).toBe(txHash)
    expect(result.feeTxHash).toBeNull()
    // nothing but the confirmation moved
    expect(result.sourceAmount).toBe(payout.sourceAmount)
    expect(result.deposit).toEqual(payout.deposit)
    expect(result.transaction).toEqual(payout.transaction)
    expect(result.createdAt).toBe(payout.createdAt)
    expect(Date.parse(result.updatedAt)).toBeGreaterThanOrEqual(Date.parse(payout.updatedAt))
  })

  it("rejects a malformed txHash with 400 naming txHash", async ({ partner, user }) => {
    const payout = await partner.payout(user)
    const hex64 = newTxHash().slice(2)
    for (const txHash of ["0x123", hex64, `0x${"g".repeat(64)}`, `0x${hex64}0`, `0X${hex64}`, "", 42]) {
      expectBadRequest(await partner.confirm(payout.payoutId, { txHash }), "txHash")
    }
    expectBadRequest(await partner.confirm(payout.payoutId, {}), "txHash")
    expectBadRequest(await partner.confirm(payout.payoutId, { txHash: newTxHash(), feeTxHash: "0x1" }), "feeTxHash")
    const unchanged = decodePayout((await partner.getPayout(payout.payoutId)).json)
    expect(unchanged.status).toBe("awaiting_deposit")
  })

  it("is idempotent for the same payout and the same hash, in any case", async ({ partner, user }) => {
    const payout = await partner.payout(user)
    const txHash = newTxHash()
    const first = await confirmed(partner, payout.payoutId, { txHash })
    for (const again of [txHash, upperHex(txHash), mixedHex(txHash)]) {
      const repeated = await confirmed(partner, payout.payoutId, { txHash: again })
      expect(repeated).toEqual(first)
    }
  })

  it("answers tx_hash_reused when another payout already used the hash, in any case", async ({ partner, user }) => {
    const [a, b] = [await partner.payout(user), await partner.payout(user)]
    const txHash = newTxHash()
    await confirmed(partner, a.payoutId, { txHash })
    for (const reused of [txHash, upperHex(txHash), mixedHex(txHash)]) {
      expectError(await partner.confirm(b.payoutId, { txHash: reused }), 409, "tx_hash_reused")
    }
    const stillOpen = decodePayout((await partner.getPayout(b.payoutId)).json)
    expect(stillOpen.status).toBe("awaiting_deposit")
    expect(stillOpen.txHash).toBeNull()
    // b can still be confirmed with its own hash
    expect((await confirmed(partner, b.payoutId, { txHash: newTxHash() })).status).toBe("deposit_confirmed")
  })

  it("answers tx_hash_reused across integrations too (one hash, one use)", async ({ server, partner, user }) => {
    const other = await newPartner(server)
    const theirs = await other.payout(await other.approvedUser())
    const txHash = newTxHash()
    await confirmed(other, theirs.payoutId, { txHash })
    expectError(await partner.confirm((await partner.payout(user)).payoutId, { txHash }), 409, "tx_hash_reused")
  })

  it("refuses a different hash once confirmed (409 ErrorBody)", async ({ partner, user }) => {
    const payout = await partner.payout(user)
    const txHash = newTxHash()
    const first = await confirmed(partner, payout.payoutId, { txHash })
    // not a reuse (the new hash is unused), so a plain 409 with no documented code
    expectError(await partner.confirm(payout.payoutId, { txHash: newTxHash() }), 409)
    expect(decodePayout((await partner.getPayout(payout.payoutId)).json).txHash).toBe(first.txHash)
  })

  it("verifies the copby leg with a feeTxHash (mock) and leaves it pending without", async ({ partner, user }) => {
    const withFee = await partner.payout(user)
    const feeTxHash = newTxHash()
    const paid = await confirmed(partner, withFee.payoutId, { txHash: newTxHash(), feeTxHash: upperHex(feeTxHash) })
    expect(paid.feeTxHash).toBe(feeTxHash)
    expect(legStatus(paid)).toEqual({ bridge_fx: "pending", bridge: "pending", copby: "verified" })
    expect(paid.receipt.feesItemized).toEqual(paid.fees)

    const withoutFee = await confirmed(partner, (await partner.payout(user)).payoutId, { txHash: newTxHash() })
    expect(withoutFee.feeTxHash).toBeNull()
    expect(legStatus(withoutFee)).toEqual({ bridge_fx: "pending", bridge: "pending", copby: "pending" })
  })

  it("rejects a feeTxHash equal to the txHash, in any case", async ({ partner, user }) => {
    const payout = await partner.payout(user)
    const txHash = newTxHash()
    for (const feeTxHash of [txHash, upperHex(txHash)]) {
      expectBadRequest(await partner.confirm(payout.payoutId, { txHash, feeTxHash }), "feeTxHash")
    }
    expect(decodePayout((await partner.getPayout(payout.payoutId)).json).status).toBe("awaiting_deposit")
  })

  it("answers tx_hash_reused for a feeTxHash already used, and claims nothing", async ({ partner, user }) => {
    const [a, b] = [await partner.payout(user), await partner.payout(user)]
    const usedByA = newTxHash()
    const feeOfA = newTxHash()
    await confirmed(partner, a.payoutId, { txHash: usedByA, feeTxHash: feeOfA })
    const freshHash = newTxHash()
    expectError(
      await partner.confirm(b.payoutId, { txHash: freshHash, feeTxHash: upperHex(usedByA) }),
      409,
      "tx_hash_reused"
    )
    expectError(await partner.confirm(b.payoutId, { txHash: newTxHash(), feeTxHash: feeOfA }), 409, "tx_hash_reused")
    // a fee hash cannot later become another payout's deposit hash either
    expectError(await partner.confirm(b.payoutId, { txHash: feeOfA }), 409, "tx_hash_reused")
    // the failed attempts claimed nothing: b's fresh hash is still free
    expect((await confirmed(partner, b.payoutId, { txHash: freshHash })).txHash).toBe(freshHash)
  })

  it("follows X-Mock-Scenario requote", async ({ partner, user }) => {
    const payout = await partner.payout(user)
    const txHash = newTxHash()
    expectError(await partner.confirm(payout.payoutId, { txHash }, { "x-mock-scenario": "requote" }), 409, "requote")
    expect((await confirmed(partner, payout.payoutId, { txHash })).status).toBe("deposit_confirmed")
  })

  it("answers requote once the deposit window has expired, before and after the sweep", async ({ server, partner, user }) => {
    const payout = await partner.payout(user)
    expect(await expirePayoutWindow(server, payout.payoutId)).toHaveLength(1)
    const txHash = newTxHash()
    expectError(await partner.confirm(payout.payoutId, { txHash }), 409, "requote")
    await pollPayout(partner, payout.payoutId, (p) => p.status === "expired")
    expectError(await partner.confirm(payout.payoutId, { txHash }), 409, "requote")
    // the refused hash was not claimed
    expect((await confirmed(partner, (await partner.payout(user)).payoutId, { txHash })).txHash).toBe(txHash)
  })
})

describe("payouts of other integrations", () => {
  it("answers 404 for an unknown payout", async ({ partner }) => {
    expectError(await partner.confirm("po_doesnotexist", { txHash: newTxHash() }), 404)
    expectError(await partner.getPayout("po_doesnotexist"), 404)
  })

  it("answers 404 to confirm and get another integration's payout and leaves it untouched", async ({ server, partner }) => {
    const owner = await newPartner(server)
    const theirs = await owner.payout(await owner.approvedUser())
    const txHash = newTxHash()
    expectError(await partner.confirm(theirs.payoutId, { txHash }), 404)
    expectError(await partner.getPayout(theirs.payoutId), 404)
    const after = decodePayout((await owner.getPayout(theirs.payoutId)).json)
    expect(after).toEqual(theirs)
    // the hash was not claimed by the refused attempt
    expect((await confirmed(owner, theirs.payoutId, { txHash })).txHash).toBe(txHash)
  })

  it("gives the typed client the contract's errors", async ({ server, partner, user }) => {
    const payout = await partner.payout(user)
    const txHash = newTxHash()
    await confirmed(partner, payout.payoutId, { txHash })
    const other = await partner.payout(user)
    const reused = await clientExit(
      server.baseUrl,
      partner.apiKey,
      (client) =>
        client.breb.confirmPayout({
          params: { payoutId: other.payoutId },
          payload: { txHash: TxHash.make(txHash) },
          headers: {}
        })
    )
    expect(failureOf(reused)).toBeInstanceOf(TxHashReused)
    const missing = await clientExit(
      server.baseUrl,
      partner.apiKey,
      (client) => client.breb.getPayout({ params: { payoutId: PayoutId.make("po_nope") } })
    )
    expect(failureOf(missing)).toBeInstanceOf(NotFound)
  })
})
