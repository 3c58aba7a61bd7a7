/**
 * A canceled payout in live mode (issue #29 part 4), against anvil and the provider simulator: the cancel deletes the
 * provider's transfer (Bridge's DELETE /transfers/{id}); a deposit the user still sends is not paid out: the provider
 * returns it to the sender onchain, the payout goes from `expired` straight to `refunded` with `deposit_after_cancel`,
 * and the reconciler verifies the refund onchain.
 */
import type { Payout } from "@cop-integrations/contracts"
import { erc20Abi } from "viem"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { request, waitUntil } from "../simulators/support.ts"
import { call, PAYOUTS, unitsOf } from "../support/flows.ts"
import {
  fundedPayout,
  type LiveStack,
  startLiveStack,
  TOKEN_DECIMALS,
  transferIdOf,
  reconcileOnce
} from "../support/liveStack.ts"

let stack: LiveStack
let apiKey: string

beforeAll(async () => {
  stack = await startLiveStack({ env: { RECONCILE_INTERVAL_MS: "3600000" }, sim: { stepDelayMs: 3_600_000 } })
  apiKey = await stack.newLiveKey()
}, 60_000)
afterAll(() => stack?.close())

const payoutOf = async (payoutId: string) =>
  (await call(stack.server.baseUrl, apiKey, "GET", `${PAYOUTS}/${payoutId}`)).json as Payout

const balanceOf = (address: `0x${string}`) =>
  stack.anvil.client.readContract({ address: stack.token, abi: erc20Abi, functionName: "balanceOf", args: [address] })

describe("a payout canceled in live mode", () => {
  it("cancels the provider's transfer; a deposit sent after it comes back to the user, never paid out", async () => {
    const { payout, user } = await fundedPayout(stack, apiKey)
    const transferId = await transferIdOf(stack, payout.payoutId)
    const canceled = await call(stack.server.baseUrl, apiKey, "POST", `${PAYOUTS}/${payout.payoutId}/cancel`)
    expect(canceled.status, canceled.text).toBe(200)
    expect((canceled.json as Payout).status).toBe("expired")
    expect((await request(stack.sim, `/v0/transfers/${transferId}`)).body.state).toBe("canceled")

    const before = await balanceOf(user.address)
    await user.send(payout.transaction)
    const refunded = await waitUntil(`payout ${payout.payoutId} refund sent`, async () => {
      const current = await payoutOf(payout.payoutId)
      return current.refund?.status === "sent" ? current : undefined
    }, { timeoutMs: 20_000 })
    expect(refunded.status).toBe("refunded")
    expect(refunded.failure).toMatchObject({ code: "deposit_after_cancel", category: "deposit" })
    expect(refunded.timeline.map((hop) => hop.status)).not.toContain("deposit_confirmed")
    expect(refunded.refund).toMatchObject({ to: user.address, token: "USDC", retained: "0" })
    const transfer = (await request(stack.sim, `/v0/transfers/${transferId}`)).body
    expect(transfer.state).toBe("refunded")
    // the whole deposit came back: the user's balance is what it was before sending it
    expect(await balanceOf(user.address)).toBe(before)
    expect(unitsOf(refunded.refund!.amount!, TOKEN_DECIMALS)).toBe(unitsOf(refunded.deposit.amount, TOKEN_DECIMALS))

    expect(await reconcileOnce(stack)).toMatchObject({ refundsVerified: 1 })
    expect((await payoutOf(payout.payoutId)).refund?.status).toBe("verified")
  })
})
