/**
 * Refunds onchain, as Bridge's `refund_to_sender` return policy does: the received amount less any return fee,
 * an ERC-20 `transfer` from the transfer's deposit address to the wallet that sent the deposit (the deposit's
 * `Transfer` log `from`). The simulator holds no deposit keys: on the local node (anvil) it impersonates the deposit
 * address and gives it gas.
 */
import { createTestClient, erc20Abi, getAddress, http, parseEther, publicActions, walletActions } from "viem"

export type SendRefund = (input: {
  readonly from: `0x${string}`
  readonly to: string
  readonly units: bigint
}) => Promise<`0x${string}`>

export const makeRefunder = (rpcUrl: string, tokenAddress: `0x${string}`): SendRefund => {
  const client = createTestClient({ mode: "anvil", transport: http(rpcUrl), cacheTime: 0 })
    .extend(publicActions)
    .extend(walletActions)
  return async ({ from, to, units }) => {
    await client.impersonateAccount({ address: from })
    try {
      await client.setBalance({ address: from, value: parseEther("1") })
      const hash = await client.writeContract({
        account: from,
        chain: null,
        address: getAddress(tokenAddress),
        abi: erc20Abi,
        functionName: "transfer",
        args: [getAddress(to), units]
      })
      const receipt = await client.waitForTransactionReceipt({ hash })
      if (receipt.status !== "success") throw new Error(`refund ${hash} reverted`)
      return hash
    } finally {
      await client.stopImpersonatingAccount({ address: from })
    }
  }
}
