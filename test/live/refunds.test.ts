/**
 * Money back to the wallet (issue #29 part 3), live against anvil and the provider simulator: a payout's deposit
 * arrives, the provider fails the transfer and returns the deposit to its sender (refund_to_sender), onchain; the
 * service hears `returned` (refund pending) then `refunded` with the transaction (sent), and the reconciler finds the
 * transaction onchain moving the amount of USDC to the user (verified). A refund the provider reports but never sent
 * stays `sent` however often the reconciler looks.
 *
 * The simulator's payment steps wait an hour (the transfer stays funds_received until the test fails it). The
 * reconciler loop runs once at start and then not for an hour: the tests run it themselves.
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

const refundBecomes = (payoutId: string, status: string) =>
  waitUntil(`payout ${payoutId} refund ${status}`, async () => {
    const current = await payoutOf(payoutId)
    return current.refund?.status === status ? current : undefined
  }, { timeoutMs: 20_000 })

const balanceOf = (address: `0x${string}`) =>
  stack.anvil.client.readContract({ address: stack.token, abi: erc20Abi, functionName: "balanceOf", args: [address] })

/** A payout whose deposit the user sent and the provider received (its transfer funds_received). */
const depositedPayout = async () => {
  const { payout, user } = await fundedPayout(stack, apiKey)
  const transferId = await transferIdOf(stack, payout.payoutId)
  await user.send(payout.transaction)
  await waitUntil(
    "the provider received the deposit",
    async () => (await request(stack.sim, `/v0/transfers/${transferId}`)).body.state === "funds_received",
    { timeoutMs: 15_000 }
  )
  return { payout, user, transferId }
}

const fail = async (transferId: string, body: Record<string, unknown>) => {
  const answer = await request(stack.sim, `/__sim/transfers/${transferId}/fail`, { body })
  expect(answer.status, JSON.stringify(answer.body)).toBe(202)
}

const refundHops = (payout: Payout) =>
  payout.timeline.filter((hop) => hop.refundStatus !== undefined).map((hop) => [hop.refundStatus, hop.source])

describe("a failed payout's deposit goes back to the user's wallet (live)", () => {
  it("deposit, provider failure, refund transaction onchain, verified", async () => {
    const { payout, transferId, user } = await depositedPayout()
    const before = await balanceOf(user.address)
    const startedAt = Date.now()
    await fail(transferId, { reason: "account_closed", refund_fee: "0.5" })

    const sent = await refundBecomes(payout.payoutId, "sent")
    const sentAt = Date.now()
    const transfer = (await request(stack.sim, `/v0/transfers/${transferId}`)).body
    expect(transfer).toMatchObject({ state: "refunded", return_details: { reason: "account_closed" } })
    expect(sent.refund).toMatchObject({ to: user.address, token: "USDC", txHash: transfer.refund.tx_hash })
    expect(sent.refund!.amount).toBe(transfer.refund.amount)
    // what came back and what the provider kept add up to the deposit, both shown
    expect(sent.refund!.retained).toBe("0.5")
    expect(unitsOf(sent.refund!.amount!, TOKEN_DECIMALS) + unitsOf("0.5", TOKEN_DECIMALS)).toBe(
      unitsOf(sent.deposit.amount, TOKEN_DECIMALS)
    )
    expect(await balanceOf(user.address) - before).toBe(unitsOf(sent.refund!.amount!, TOKEN_DECIMALS))

    const report = await reconcileOnce(stack)
    expect(report).toMatchObject({ refundsChecked: 1, refundsVerified: 1 })
    const verified = await payoutOf(payout.payoutId)
    const verifiedAt = Date.now()
    expect(verified.status).toBe("refunded")
    expect(verified.failure).toMatchObject({ code: "account_inactive" })
    expect(verified.refund).toEqual({ ...sent.refund, status: "verified", at: expect.any(String) })
    expect(refundHops(verified)).toEqual([["sent", "provider_webhook"], ["verified", "chain"]])
    console.log(
      `refund timings: failure → sent (webhooks, refund mined) ${sentAt - startedAt} ms; sent → verified (one ` +
        `reconciler run) ${verifiedAt - sentAt} ms`
    )
  })

  it("a refund the provider reports but never sent stays sent: the reconciler looks again, never verifies", async () => {
    const { payout, transferId } = await depositedPayout()
    await fail(transferId, { reason: "account_closed", phantom: true })
    const sent = await refundBecomes(payout.payoutId, "sent")
    expect(sent.refund!.txHash).toBe((await request(stack.sim, `/v0/transfers/${transferId}`)).body.refund.tx_hash)

    for (const run of [1, 2]) {
      const report = await reconcileOnce(stack)
      expect(report, `run ${run}`).toMatchObject({ refundsChecked: 1, refundsVerified: 0 })
    }
    const after = await payoutOf(payout.payoutId)
    expect(after.refund).toEqual(sent.refund)
    expect(refundHops(after)).toEqual([["sent", "provider_webhook"]])
  })
})
