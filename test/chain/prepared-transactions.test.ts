/**
 * The prepared transactions on a real EVM node: a payout's `transaction` and `feeTransaction`, signed by the
 * end user's own key and mined by anvil against a deployed 6-decimal ERC-20, move exactly the deposit to
 * `deposit.address` and exactly the service fee to the fee wallet, and nothing else. The hashes they produce
 * then confirm the payout through the API.
 */
import type { PreparedTx } from "@cop-integrations/contracts"
import { erc20Abi, getAddress, type Hex, parseEther, parseEventLogs, type TransactionReceipt } from "viem"
import { generatePrivateKey, privateKeyToAddress } from "viem/accounts"
import { describe, expect } from "vitest"
import { type Anvil, startAnvil, testUsdArtifact } from "../../scripts/localStack/anvil.ts"
import { httpTest } from "../support/fixture.ts"
import { expectedPayout, newAddress, type Partner, unitsOf } from "../support/flows.ts"

const DECIMALS = 6
const feeWallet = newAddress()

let anvil: Anvil
let token: `0x${string}`

// The server's options name the token deployed on anvil: read when the server starts, after it.beforeAll below.
const it = httpTest(() => ({
  env: { TOKEN_ADDRESS: token, TOKEN_DECIMALS: String(DECIMALS), FEE_WALLET_ADDRESS: feeWallet }
}))

it.beforeAll(async () => {
  anvil = await startAnvil()
  token = await anvil.deploy(testUsdArtifact())
})
it.afterAll(() => anvil?.close())

const balanceOf = (owner: `0x${string}`) =>
  anvil.client.readContract({ address: token, abi: erc20Abi, functionName: "balanceOf", args: [owner] })

const mint = (to: `0x${string}`, units: bigint) => anvil.mintTestUsd(token, to, units)

/** An end user with their own key, some ETH for gas, and KYC approved for this integration. */
const newEndUser = async (partner: Partner) => {
  const key = generatePrivateKey()
  const address = privateKeyToAddress(key)
  await anvil.client.setBalance({ address, value: parseEther("1") })
  await partner.approvedUser(address)
  return { address, wallet: anvil.walletOf(key) }
}

type EndUser = Awaited<ReturnType<typeof newEndUser>>

/** What the user's wallet does with a prepared transaction: send it as given, wait until it is mined. */
const signAndSend = async (user: EndUser, prepared: PreparedTx): Promise<TransactionReceipt> => {
  expect(prepared.approvalTarget).toBeNull()
  const hash = await user.wallet.sendTransaction({
    to: prepared.to as Hex,
    data: prepared.data as Hex,
    value: BigInt(prepared.value)
  })
  const receipt = await anvil.client.waitForTransactionReceipt({ hash })
  expect(receipt.status).toBe("success")
  return receipt
}

const transfersIn = (receipt: TransactionReceipt) =>
  parseEventLogs({ abi: erc20Abi, logs: receipt.logs, eventName: "Transfer" }).map((log) => ({
    token: getAddress(log.address),
    from: log.args.from,
    to: log.args.to,
    value: log.args.value
  }))

describe("prepared transactions on anvil", () => {
  it.for(["8000", "250000", "123456.78", "11552000"])(
    "move exactly the deposit and the service fee for %s COP, and their hashes confirm the payout",
    async (destinationCop, { server, partner }) => {
      const user = await newEndUser(partner)
      const payout = await partner.payout(user.address, { destinationCop })
      const expected = expectedPayout(destinationCop, server.config)
      const serviceFee = payout.fees.find((leg) => leg.code === "copby")
      expect(serviceFee?.to).toBe(feeWallet)
      expect(unitsOf(payout.deposit.amount, DECIMALS)).toBe(expected.deposit)
      expect(unitsOf(payout.sourceAmount, DECIMALS)).toBe(expected.totalPaid)

      // The user holds exactly what the payout costs: any extra unit in the calldata would revert.
      await mint(user.address, expected.totalPaid)
      const depositAddress = getAddress(payout.deposit.address)
      const [depositBefore, feeBefore] = [await balanceOf(depositAddress), await balanceOf(feeWallet)]

      const depositReceipt = await signAndSend(user, payout.transaction)
      const feeReceipt = await signAndSend(user, payout.feeTransaction)

      expect(transfersIn(depositReceipt)).toEqual([{
        token,
        from: user.address,
        to: depositAddress,
        value: expected.deposit
      }])
      expect(transfersIn(feeReceipt)).toEqual([{
        token,
        from: user.address,
        to: feeWallet,
        value: expected.serviceFee
      }])
      expect(await balanceOf(user.address)).toBe(0n)
      expect(await balanceOf(depositAddress)).toBe(depositBefore + expected.deposit)
      expect(await balanceOf(feeWallet)).toBe(feeBefore + expected.serviceFee)

      const confirmed = await partner.confirm(payout.payoutId, {
        txHash: depositReceipt.transactionHash,
        feeTxHash: feeReceipt.transactionHash
      })
      expect(confirmed.status, confirmed.text).toBe(200)
      expect(confirmed.json).toMatchObject({
        txHash: depositReceipt.transactionHash,
        feeTxHash: feeReceipt.transactionHash
      })
    }
  )

  it("a transaction prepared for one user reverts from a wallet that cannot pay it", async ({ server, partner }) => {
    const user = await newEndUser(partner)
    const payout = await partner.payout(user.address)
    const expected = expectedPayout("250000", server.config)
    await mint(user.address, expected.deposit - 1n)
    await expect(signAndSend(user, payout.transaction)).rejects.toThrow(/balance/)
    expect(await balanceOf(user.address)).toBe(expected.deposit - 1n)
  })
})
