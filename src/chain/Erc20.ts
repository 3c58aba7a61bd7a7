import { encodeFunctionData, erc20Abi, getAddress } from "viem"
import type { PreparedTx } from "@cop-integrations/contracts"

/** An ERC-20 `transfer(to, amount)` for the user to sign; amount in token base units. */
export const erc20Transfer = (token: `0x${string}`, to: string, amountBaseUnits: bigint): PreparedTx => ({
  approvalTarget: null,
  to: getAddress(token),
  data: encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [getAddress(to), amountBaseUnits] }),
  value: "0"
})
