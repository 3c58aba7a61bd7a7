/**
 * Confirm verifies a deposit by what moved (`fromIs: "transfer"`): the token's Transfer logs from the user to the
 * deposit address, summed, whoever sent the transaction. A smart-contract wallet's transfer is sent by its owner (or
 * a relayer, a bundler): it verifies for the wallet's address; the plain EOA transfer still does; a transfer from
 * another address, a short one and one of another token are refused.
 */
import { Effect, Redacted, Result } from "effect"
import { erc20Abi, type Hex, parseEther } from "viem"
import { generatePrivateKey, privateKeyToAddress } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Chain } from "../../src/chain/Chain.ts"
import { makeChainLive } from "../../src/chain/ChainLive.ts"
import { type Anvil, startAnvil, testUsdArtifact } from "../../scripts/localStack/anvil.ts"
import { type Call, deploySmartAccount, executeCalldata, tokenTransfer } from "../../scripts/localStack/smartWallets.ts"
import { newAddress } from "../support/flows.ts"

let anvil: Anvil
let token: Hex
let otherToken: Hex
let chain: Chain["Service"]

const DEPOSIT = 63_448_556n

beforeAll(async () => {
  anvil = await startAnvil()
  token = await anvil.deploy(testUsdArtifact())
  otherToken = await anvil.deploy(testUsdArtifact())
  chain = makeChainLive({
    rpcUrl: Redacted.make(anvil.rpcUrl),
    chainName: "anvil",
    tokens: [{ symbol: "USDC", chain: "anvil", address: token, decimals: 6 }]
  }).chain
})
afterAll(() => anvil?.close())

/** An EOA with ETH for gas, and a SmartAccount it owns holding `units` of both tokens. */
const newOwnerWithAccount = async (units: bigint) => {
  const key = generatePrivateKey()
  const owner = privateKeyToAddress(key)
  await anvil.client.setBalance({ address: owner, value: parseEther("1") })
  const account = await deploySmartAccount(anvil, owner)
  for (const contract of [token, otherToken]) {
    await anvil.mintTestUsd(contract, account, units)
    await anvil.mintTestUsd(contract, owner, units)
  }
  const wallet = anvil.walletOf(key)
  /** The owner makes the account run `calls`: the transaction's sender is the owner. */
  const execute = async (calls: ReadonlyArray<Call>) => {
    const hash = await wallet.sendTransaction({ to: account, data: executeCalldata(calls) })
    const receipt = await anvil.client.waitForTransactionReceipt({ hash })
    expect(receipt.status).toBe("success")
    expect(receipt.from.toLowerCase()).toBe(owner.toLowerCase())
    return hash
  }
  /** A plain ERC-20 transfer the owner sends from its own balance. */
  const transfer = async (to: Hex, value: bigint) => {
    const hash = await wallet.writeContract({
      address: token,
      abi: erc20Abi,
      functionName: "transfer",
      args: [to, value]
    })
    await anvil.client.waitForTransactionReceipt({ hash })
    return hash
  }
  return { owner, account, execute, transfer }
}

const verify = (txHash: string, from: string, to: string) =>
  Effect.runPromise(
    Effect.result(chain.verifyTransfer({ token, txHash, from, to, minAmountBaseUnits: DEPOSIT, fromIs: "transfer" }))
  )

const reasonOf = async (txHash: string, from: string, to: string) => {
  const result = await verify(txHash, from, to)
  if (Result.isSuccess(result)) throw new Error("expected the deposit not to verify")
  return result.failure.reason
}

describe("ChainLive.verifyTransfer by what moved", () => {
  it("verifies a smart account's transfer, sent by its owner, for the account's address", async () => {
    const { account, execute } = await newOwnerWithAccount(DEPOSIT)
    const depositAddress = newAddress()
    const txHash = await execute([tokenTransfer(token, depositAddress, DEPOSIT)])
    expect(Result.isSuccess(await verify(txHash, account, depositAddress))).toBe(true)
  })

  it("sums the account's transfers to the deposit address in one batch", async () => {
    const { account, execute } = await newOwnerWithAccount(DEPOSIT)
    const depositAddress = newAddress()
    const half = DEPOSIT / 2n
    const txHash = await execute([
      tokenTransfer(token, depositAddress, half),
      tokenTransfer(token, depositAddress, DEPOSIT - half)
    ])
    expect(Result.isSuccess(await verify(txHash, account, depositAddress))).toBe(true)
  })

  it("still verifies a plain EOA transfer", async () => {
    const { owner, transfer } = await newOwnerWithAccount(DEPOSIT)
    const depositAddress = newAddress()
    const txHash = await transfer(depositAddress, DEPOSIT)
    expect(Result.isSuccess(await verify(txHash, owner, depositAddress))).toBe(true)
  })

  it("refuses a transaction the user sent whose Transfer moved another address's tokens", async () => {
    const { account, execute, owner } = await newOwnerWithAccount(DEPOSIT)
    const depositAddress = newAddress()
    const txHash = await execute([tokenTransfer(token, depositAddress, DEPOSIT)])
    expect(await reasonOf(txHash, owner, depositAddress)).toContain(
      `has no Transfer of the anvil token ${token} from ${owner} to ${depositAddress}`
    )
    expect(account).not.toBe(owner)
  })

  it("refuses a transfer one base unit short", async () => {
    const { account, execute } = await newOwnerWithAccount(DEPOSIT)
    const depositAddress = newAddress()
    const txHash = await execute([tokenTransfer(token, depositAddress, DEPOSIT - 1n)])
    expect(await reasonOf(txHash, account, depositAddress)).toContain(
      `transfers ${DEPOSIT - 1n} base units to ${depositAddress}, less than the ${DEPOSIT} expected`
    )
  })

  it("refuses a Transfer logged by another token contract", async () => {
    const { account, execute } = await newOwnerWithAccount(DEPOSIT)
    const depositAddress = newAddress()
    const txHash = await execute([tokenTransfer(otherToken, depositAddress, DEPOSIT)])
    expect(await reasonOf(txHash, account, depositAddress)).toContain(
      `has no Transfer of the anvil token ${token} from ${account} to ${depositAddress}`
    )
  })
})
