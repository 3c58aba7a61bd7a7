/**
 * Smart-contract wallets in live mode (issue #22, part 5), against anvil and the provider simulator: the payout's
 * `userAddress` is a SmartAccount, whose owner (an EOA) sends the transaction that makes the account transfer. The
 * confirm verifies by what moved (the Transfer logs from the account), not by the transaction's sender.
 */
import type { PreparedTx } from "@cop-integrations/contracts"
import type { Hex } from "viem"
import { generatePrivateKey, privateKeyToAddress } from "viem/accounts"
import { parseEther } from "viem"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Call, deploySmartAccount, executeCalldata } from "../../scripts/localStack/smartWallets.ts"
import { call, PAYOUTS, unitsOf } from "../support/flows.ts"
import { completeLiveKyc, type LiveStack, startLiveStack, TOKEN_DECIMALS } from "../support/liveStack.ts"

let stack: LiveStack
let apiKey: string

beforeAll(async () => {
  stack = await startLiveStack({})
  apiKey = await stack.newLiveKey()
}, 60_000)
afterAll(() => stack?.close())

const post = (path: string, body: unknown) => call(stack.server.baseUrl, apiKey, "POST", path, { body })

const asCall = (prepared: PreparedTx): Call => ({
  to: prepared.to as Hex,
  value: BigInt(prepared.value),
  data: prepared.data as Hex
})

/** An approved SmartAccount user: the account (the payout's `userAddress`) and the EOA that owns it. */
const smartAccountUser = async () => {
  const key = generatePrivateKey()
  const owner = privateKeyToAddress(key)
  await stack.anvil.client.setBalance({ address: owner, value: parseEther("1") })
  const account = await deploySmartAccount(stack.anvil, owner)
  await completeLiveKyc(stack, apiKey, account, `sa-${account.slice(2, 12).toLowerCase()}@example.com`)
  const wallet = stack.anvil.walletOf(key)
  /** The owner makes the account run `calls` atomically; the transaction's sender is the owner. */
  const execute = async (calls: ReadonlyArray<Call>) => {
    const hash = await wallet.sendTransaction({ to: account, data: executeCalldata(calls) })
    const receipt = await stack.anvil.client.waitForTransactionReceipt({ hash })
    expect(receipt.status).toBe("success")
    return receipt
  }
  return { account, owner, execute, fund: (units: bigint) => stack.anvil.mintTestUsd(stack.token, account, units) }
}

const newPayout = async (userAddress: string) => {
  const created = await post(PAYOUTS, {
    userAddress,
    destinationCop: "8000",
    breBKey: "@camila2024",
    accountOwnerName: "Camila Rojas"
  })
  expect(created.status, created.text).toBe(201)
  return created.json as any
}

const copbyOf = (payout: any) => payout.fees.find((leg: any) => leg.code === "copby").status

describe("smart-contract wallets, live", () => {
  it("confirms a deposit and a fee a SmartAccount transferred in transactions its owner sent", async () => {
    const user = await smartAccountUser()
    const payout = await newPayout(user.account)
    await user.fund(unitsOf(payout.sourceAmount, TOKEN_DECIMALS))
    const deposit = await user.execute([asCall(payout.transaction)])
    const fee = await user.execute([asCall(payout.feeTransaction)])
    expect(deposit.from.toLowerCase()).toBe(user.owner.toLowerCase())
    const confirmed = await post(`${PAYOUTS}/${payout.payoutId}/confirm`, {
      txHash: deposit.transactionHash,
      feeTxHash: fee.transactionHash
    })
    expect(confirmed.status, confirmed.text).toBe(200)
    expect((confirmed.json as any).status).toBe("deposit_confirmed")
    expect(copbyOf(confirmed.json)).toBe("verified")
  })
})
