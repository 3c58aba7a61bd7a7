/**
 * The one calldata the kit reads: ERC-20 `transfer(address to, uint256 amount)`, selector 0xa9059cbb, then two 32-byte
 * ABI words (the address left-padded with zeros, the amount big-endian). Other ERC-20 selectors are named so a
 * failure says which function the calldata calls instead.
 */
import { checksumAddress, isAddress } from "@cop-integrations/contracts"

export interface DecodedTransfer {
  readonly to: string
  readonly amount: bigint
}

const TRANSFER = "a9059cbb"
/** The other functions of the ERC-20 ABI, by selector. */
const OTHER_ERC20: Readonly<Record<string, string>> = {
  "095ea7b3": "approve",
  "23b872dd": "transferFrom",
  "dd62ed3e": "allowance",
  "70a08231": "balanceOf",
  "18160ddd": "totalSupply",
  "313ce567": "decimals",
  "06fdde03": "name",
  "95d89b41": "symbol"
}

/** The `transfer(to, amount)` an ERC-20 calldata encodes, or a reason it is not one. */
export const decodeErc20Transfer = (data: string): DecodedTransfer | { readonly problem: string } => {
  if (!/^0x[0-9a-fA-F]*$/.test(data)) return { problem: "calldata is not 0x-prefixed hex" }
  const hex = data.slice(2).toLowerCase()
  if (hex.length < 8) return { problem: "calldata is not an ERC-20 call: shorter than a 4-byte function selector" }
  const selector = hex.slice(0, 8)
  if (selector !== TRANSFER) {
    const other = OTHER_ERC20[selector]
    return {
      problem: other === undefined
        ? `calldata is not an ERC-20 call: unknown function selector 0x${selector}`
        : `calldata calls ${other}, not transfer`
    }
  }
  const args = hex.slice(8)
  if (args.length !== 128) {
    return { problem: `calldata is not transfer(address,uint256): ${args.length / 2} bytes of arguments, not 64` }
  }
  const [addressWord, amountWord] = [args.slice(0, 64), args.slice(64)]
  if (!/^0{24}/.test(addressWord)) {
    return {
      problem: "calldata is not transfer(address,uint256): the address word is not a 20-byte address padded with zeros"
    }
  }
  return { to: checksumAddress(`0x${addressWord.slice(24)}`), amount: BigInt(`0x${amountWord}`) }
}

export const sameAddress = (a: string | null, b: string | null): boolean =>
  a !== null && b !== null && isAddress(a) && isAddress(b) && a.toLowerCase() === b.toLowerCase()
