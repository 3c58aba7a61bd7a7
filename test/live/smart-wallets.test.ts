/**
 * Smart-contract wallets in live mode (issue #22, part 5), against anvil and the provider simulator: the payout's
 * `userAddress` is a SmartAccount, whose owner (an EOA) sends the transaction that makes the account transfer. The
 * confirm verifies by what moved (the Transfer logs from the account), not by the transaction's sender. A prepared
 * payout's `calls` (an EIP-5792 batch of the deposit and the fee) run by an EIP-7702 delegated EOA as one transaction:
 * its one hash confirms the deposit and verifies the `copby` leg from the same receipt; a batch whose fee transfer is
 * short leaves the leg pending.
 */
import type { PreparedTx } from "@cop-integrations/contracts"
import type { Hex } from "viem"
import { generatePrivateKey, privateKeyToAddress } from "viem/accounts"
import { parseEther } from "viem"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Call, deploySmartAccount, executeCalldata, tokenTransfer } from "../../scripts/localStack/smartWallets.ts"
import { call, PAYOUTS, unitsOf } from "../support/flows.ts"
import { completeLiveKyc, type LiveStack, newWalletUser, startLiveStack, TOKEN_DECIMALS } from "../support/liveStack.ts"

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

/** What a confirm answers: the provider's callbacks may move the payout on while the confirm checks the chain. */
const DEPOSIT_CONFIRMED_OR_LATER = ["deposit_confirmed", "processing", "completed"]

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
    // the provider may have seen the deposit and moved the payout on before the confirm (a busy machine)
    expect(DEPOSIT_CONFIRMED_OR_LATER).toContain((confirmed.json as any).status)
    expect(copbyOf(confirmed.json)).toBe("verified")
  })
})

/** An approved EOA user whose account delegates to SmartAccount (EIP-7702): it runs a batch by calling itself. */
const delegatedUser = async () => {
  const user = await newWalletUser(stack)
  await completeLiveKyc(stack, apiKey, user.address, `d-${user.address.slice(2, 12).toLowerCase()}@example.com`)
  const implementation = await deploySmartAccount(stack.anvil, user.address)
  /** One type-4 transaction: the delegation and the batch, signed once by the user. */
  const sendBatch = async (calls: ReadonlyArray<Call>) => {
    const authorization = await user.wallet.signAuthorization({ contractAddress: implementation, executor: "self" })
    const hash = await user.wallet.sendTransaction({
      to: user.address,
      data: executeCalldata(calls),
      authorizationList: [authorization]
    })
    const receipt = await stack.anvil.client.waitForTransactionReceipt({ hash })
    expect(receipt.status).toBe("success")
    return receipt
  }
  return { ...user, sendBatch }
}

/** A payout's `calls` as the batch a wallet runs for `wallet_sendCalls`. */
const batchOf = (payout: any): ReadonlyArray<Call> =>
  payout.calls.calls.map((c: any) => ({ to: c.to, data: c.data, value: BigInt(c.value) }))

describe("one-signature payouts (calls), live", () => {
  it("prepares the deposit and the fee as one EIP-5792 batch", async () => {
    const user = await newWalletUser(stack)
    await completeLiveKyc(stack, apiKey, user.address, `c-${user.address.slice(2, 12).toLowerCase()}@example.com`)
    const payout = await newPayout(user.address)
    expect(payout.calls).toEqual({
      version: "2.0.0",
      chainId: "0x7a69",
      from: user.address,
      atomicRequired: true,
      calls: [payout.transaction, payout.feeTransaction].map((tx: PreparedTx) => ({
        to: tx.to,
        data: tx.data,
        value: "0x0"
      }))
    })
  })

  it("confirms an EIP-7702 account's batch by its one hash, the copby leg verified from the same receipt", async () => {
    const user = await delegatedUser()
    const payout = await newPayout(user.address)
    await user.fund(unitsOf(payout.sourceAmount, TOKEN_DECIMALS))
    const batch = await user.sendBatch(batchOf(payout))
    const confirmed = await post(`${PAYOUTS}/${payout.payoutId}/confirm`, { txHash: batch.transactionHash })
    expect(confirmed.status, confirmed.text).toBe(200)
    const body = confirmed.json as any
    expect(DEPOSIT_CONFIRMED_OR_LATER).toContain(body.status)
    expect(copbyOf(body)).toBe("verified")
    expect(body.txHash).toBe(batch.transactionHash)
    expect(body.feeTxHash).toBe(batch.transactionHash)
    console.info(`[smart-wallets] 7702 batch (deposit + fee, delegation included): gas ${batch.gasUsed}`)
  })

  it("leaves the copby leg pending when the batch's fee transfer is one base unit short", async () => {
    const user = await delegatedUser()
    const payout = await newPayout(user.address)
    await user.fund(unitsOf(payout.sourceAmount, TOKEN_DECIMALS))
    const [deposit, fee] = batchOf(payout)
    const leg = payout.fees.find((l: any) => l.code === "copby")
    const shortFee = tokenTransfer(fee!.to, leg.to, unitsOf(leg.amountUsd, TOKEN_DECIMALS) - 1n)
    const batch = await user.sendBatch([deposit!, shortFee])
    const confirmed = await post(`${PAYOUTS}/${payout.payoutId}/confirm`, { txHash: batch.transactionHash })
    expect(confirmed.status, confirmed.text).toBe(200)
    expect(copbyOf(confirmed.json)).toBe("pending")
    expect((confirmed.json as any).feeTxHash).toBeNull()
  })
})
