import { decodeFunctionData, erc20Abi, isAddress } from "viem"

export interface DecodedTransfer {
  readonly to: string
  readonly amount: bigint
}

/** The `transfer(to, amount)` an ERC-20 calldata encodes, or a reason it is not one. */
export const decodeErc20Transfer = (data: string): DecodedTransfer | { readonly problem: string } => {
  if (!/^0x[0-9a-fA-F]*$/.test(data)) return { problem: "calldata is not 0x-prefixed hex" }
  try {
    const decoded = decodeFunctionData({ abi: erc20Abi, data: data as `0x${string}` })
    if (decoded.functionName !== "transfer") return { problem: `calldata calls ${decoded.functionName}, not transfer` }
    const [to, amount] = decoded.args
    return { to, amount }
  } catch (error) {
    return { problem: `calldata is not an ERC-20 call: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}` }
  }
}

export const sameAddress = (a: string | null, b: string | null): boolean =>
  a !== null && b !== null && isAddress(a, { strict: false }) && isAddress(b, { strict: false }) &&
  a.toLowerCase() === b.toLowerCase()
