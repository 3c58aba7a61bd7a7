/**
 * The smart-wallet fixture on anvil: SmartAccount (a minimal contract wallet that runs an atomic batch of calls for
 * its owner, also the code an EIP-7702 delegated EOA runs), from the committed artifact
 * (scripts/smart-wallet-fixtures.ts).
 */
import { encodeFunctionData, erc20Abi, type Hex } from "viem"
import { type Anvil, committedArtifact, type Compiled } from "./anvil.ts"

export const smartAccountArtifact = (): Compiled =>
  committedArtifact<{ readonly contracts: { readonly SmartAccount: Compiled } }>("SmartWallets.artifact.json")
    .contracts.SmartAccount

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
export const deploySmartAccount = (anvil: Anvil, owner: Hex): Promise<Hex> =>
  anvil.deploy(smartAccountArtifact(), [owner])

/** `execute(calls)`'s calldata: the batch a SmartAccount (or an EOA delegated to one) runs atomically. */
export const executeCalldata = (calls: ReadonlyArray<Call>): Hex =>
  encodeFunctionData({ abi: smartAccountArtifact().abi, functionName: "execute", args: [calls] })
