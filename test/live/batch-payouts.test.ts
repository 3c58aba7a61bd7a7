/**
 * Batch payouts in live mode (issue #34), against anvil and the provider simulator: 25 payouts signed once. An EIP-7702
 * delegated EOA runs the batch's `calls` as one transaction, and so does a SmartAccount its owner drives; the one hash
 * confirms every payout whose deposit transfer is in the receipt in full, and the summed fee transfer verifies their
 * `copby` legs. An item whose transfer is one base unit short stays awaiting, its `depositError` saying why. The gas
 * of the batch is compared with the same transfers sent one by one (printed for the closing note).
 */
import type { PayoutBatch } from "@cop-integrations/contracts"
import { type Hex, parseEther } from "viem"
import { generatePrivateKey, privateKeyToAddress } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Call, deploySmartAccount, executeCalldata } from "../../scripts/localStack/smartWallets.ts"
import { BREB, call, newAddress, unitsOf } from "../support/flows.ts"
import { completeLiveKyc, type LiveStack, newWalletUser, startLiveStack, TOKEN_DECIMALS } from "../support/liveStack.ts"

let stack: LiveStack

beforeAll(async () => {
  stack = await startLiveStack({})
}, 60_000)
afterAll(() => stack?.close())

const BATCHES = `${BREB}/payout-batches`
const ITEMS = 25
/** What a confirm answers: the provider's callbacks may move a payout on while the confirm reads the chain. */
const DEPOSIT_CONFIRMED_OR_LATER = ["deposit_confirmed", "processing", "completed"]

/** Each test its own integration: its 25 destinations stay within one integration's verifications a minute. */
const partnerOf = async () => {
  const apiKey = await stack.newLiveKey()
  const post = (path: string, body: unknown) => call(stack.server.baseUrl, apiKey, "POST", path, { body })
  return { apiKey, post }
}

const createBatch = async (post: (path: string, body: unknown) => ReturnType<typeof call>, userAddress: string) => {
  const created = await post(BATCHES, {
    userAddress,
    items: Array.from({ length: ITEMS }, (_, index) => ({
      destinationCop: String(8000 + index * 100),
      breBKey: `@batch${index}`,
      accountOwnerName: "Camila Rojas",
      reference: `inv-${index}`
    }))
  })
  expect(created.status, created.text).toBe(201)
  const batch = created.json as PayoutBatch
  expect(batch.totals.count).toBe(ITEMS)
  return batch
}

const callsOf = (batch: PayoutBatch): Array<Call> =>
  batch.calls!.calls.map((c) => ({ to: c.to as Hex, data: c.data as Hex, value: BigInt(c.value) }))

const copbyOf = (payout: PayoutBatch["items"][number]["payout"]) =>
  payout?.fees.find((leg) => leg.code === "copby")?.status

describe("batch payouts, live", () => {
  it(
    "an EIP-7702 account signs 25 payouts once; the one hash confirms them all, fees verified from the same receipt",
    async () => {
      const { apiKey, post } = await partnerOf()
      const user = await newWalletUser(stack)
      await completeLiveKyc(stack, apiKey, user.address, `b7-${user.address.slice(2, 12).toLowerCase()}@example.com`)
      const implementation = await deploySmartAccount(stack.anvil, user.address)
      const batch = await createBatch(post, user.address)
      await user.fund(unitsOf(batch.totals.sourceAmount, TOKEN_DECIMALS))

      // One type-4 transaction, signed once: the delegation and every call of the batch.
      const authorization = await user.wallet.signAuthorization({ contractAddress: implementation, executor: "self" })
      const hash = await user.wallet.sendTransaction({
        to: user.address,
        data: executeCalldata(callsOf(batch)),
        authorizationList: [authorization]
      })
      const receipt = await stack.anvil.client.waitForTransactionReceipt({ hash })
      expect(receipt.status).toBe("success")

      const confirmed = await post(`${BATCHES}/${batch.batchId}/confirm`, { txHash: hash })
      expect(confirmed.status, confirmed.text).toBe(200)
      const body = confirmed.json as PayoutBatch
      expect(body.txHash).toBe(hash)
      expect(["confirmed", "completed"]).toContain(body.status)
      for (const entry of body.items) {
        expect(DEPOSIT_CONFIRMED_OR_LATER).toContain(entry.payout?.status)
        expect(entry.payout?.txHash).toBe(hash)
        expect(copbyOf(entry.payout)).toBe("verified")
        expect(entry.depositError).toBeNull()
      }

      // The same transfers one by one, as 25 single payouts without `calls` send them: each deposit (to a fresh
      // address, as a deposit address is) and each payout's own fee transfer, from a plain EOA.
      const separate = await newWalletUser(stack)
      await separate.fund(unitsOf(batch.totals.sourceAmount, TOKEN_DECIMALS) * 2n)
      let separateGas = 0n
      for (const entry of body.items) {
        const payout = entry.payout!
        const deposit = await separate.send({
          ...payout.transaction,
          data: retarget(payout.transaction.data, newAddress())
        })
        const fee = await separate.send(payout.feeTransaction)
        expect([deposit.status, fee.status]).toEqual(["success", "success"])
        separateGas += deposit.gasUsed + fee.gasUsed
      }
      console.info(
        `[batch-payouts] ${ITEMS} payouts signed once (EIP-7702, delegation included): gas ${receipt.gasUsed}; ` +
          `the same ${ITEMS} deposits and ${ITEMS} fee transfers one by one: gas ${separateGas} ` +
          `(${((Number(receipt.gasUsed) / Number(separateGas)) * 100).toFixed(1)} %)`
      )
      expect(receipt.gasUsed).toBeLessThan(separateGas)
    },
    120_000
  )

  it("a SmartAccount's owner sends the batch; an item one base unit short stays awaiting with its reason", async () => {
    const { apiKey, post } = await partnerOf()
    const key = generatePrivateKey()
    const owner = privateKeyToAddress(key)
    await stack.anvil.client.setBalance({ address: owner, value: parseEther("1") })
    const account = await deploySmartAccount(stack.anvil, owner)
    await completeLiveKyc(stack, apiKey, account, `bs-${account.slice(2, 12).toLowerCase()}@example.com`)
    const batch = await createBatch(post, account)
    await stack.anvil.mintTestUsd(stack.token, account, unitsOf(batch.totals.sourceAmount, TOKEN_DECIMALS))

    const short = 7
    const calls = callsOf(batch)
    const deposit = batch.items[short]!.payout!
    calls[short] = {
      ...calls[short]!,
      data: retarget(calls[short]!.data, deposit.deposit.address, unitsOf(deposit.deposit.amount, TOKEN_DECIMALS) - 1n)
    }
    const hash = await stack.anvil.walletOf(key).sendTransaction({ to: account, data: executeCalldata(calls) })
    const receipt = await stack.anvil.client.waitForTransactionReceipt({ hash })
    expect(receipt.status).toBe("success")
    expect(receipt.from.toLowerCase()).toBe(owner.toLowerCase())

    const confirmed = await post(`${BATCHES}/${batch.batchId}/confirm`, { txHash: hash })
    expect(confirmed.status, confirmed.text).toBe(200)
    const body = confirmed.json as PayoutBatch
    expect(body.status).toBe("partially_confirmed")
    const left = body.items[short]!
    expect(left.payout?.status).toBe("awaiting_deposit")
    expect(left.payout?.txHash).toBeNull()
    expect(left.depositError?.error).toMatch(
      new RegExp(`^items\\.${short}: txHash transfers [0-9.]+ USDC to its deposit address`)
    )
    for (const entry of body.items.filter((candidate) => candidate.index !== short)) {
      expect(DEPOSIT_CONFIRMED_OR_LATER).toContain(entry.payout?.status)
      expect(copbyOf(entry.payout)).toBe("verified")
    }
  }, 120_000)
})

/** An ERC-20 `transfer` call's calldata sent to `to` instead (and, given, moving `amount` instead). */
const retarget = (data: string, to: string, amount?: bigint): Hex => {
  const selector = data.slice(0, 10)
  const value = amount === undefined ? data.slice(-64) : amount.toString(16).padStart(64, "0")
  return `${selector}${to.slice(2).toLowerCase().padStart(64, "0")}${value}` as Hex
}
