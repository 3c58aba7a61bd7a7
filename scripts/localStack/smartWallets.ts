/**
 * The smart-wallet fixture on anvil: SmartAccount (a minimal contract wallet that runs an atomic batch of calls for
 * its owner, also the code an EIP-7702 delegated EOA runs), from the committed artifact
 * (scripts/smart-wallet-fixtures.ts).
 */
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { type Abi, encodeFunctionData, erc20Abi, getAddress, type Hex } from "viem"
import type { Anvil } from "./anvil.ts"

interface Compiled {
  readonly abi: Abi
  readonly bytecode: Hex
}

let artifact: Compiled | undefined

// The artifact is ours, written by scripts/smart-wallet-fixtures.ts from the pinned solc (a test checks it is current).
export const smartAccountArtifact = (): Compiled => (artifact ??= (JSON.parse(
  readFileSync(fileURLToPath(new URL("../../test/chain/SmartWallets.artifact.json", import.meta.url)), "utf8")
) as { readonly contracts: { readonly SmartAccount: Compiled } }).contracts.SmartAccount)

export interface Call {
  readonly to: Hex
  readonly value: bigint
  readonly data: Hex
}

/** A call of an ERC-20's `transfer(to, value)`. */
export const tokenTransfer = (token: Hex, to: Hex, value: bigint): Call => ({
  to: token,
  value: 0n,
  data: encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [to, value] })
})

/** Deploys a SmartAccount owned by `owner`; its address once mined. */
export const deploySmartAccount = async (anvil: Anvil, owner: Hex): Promise<Hex> => {
  const { abi, bytecode } = smartAccountArtifact()
  const hash = await anvil.dev.deployContract({ abi, bytecode, args: [owner] })
  const receipt = await anvil.client.waitForTransactionReceipt({ hash })
  if (receipt.status !== "success" || !receipt.contractAddress) throw new Error(`deployment failed: ${hash}`)
  return getAddress(receipt.contractAddress)
}

/** `execute(calls)`'s calldata: the batch a SmartAccount (or an EOA delegated to one) runs atomically. */
export const executeCalldata = (calls: ReadonlyArray<Call>): Hex =>
  encodeFunctionData({ abi: smartAccountArtifact().abi, functionName: "execute", args: [calls] })
