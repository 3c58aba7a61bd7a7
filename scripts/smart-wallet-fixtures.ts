/**
 * Compiles test/chain/SmartWallets.sol (SmartAccount: a minimal smart-contract wallet that runs a batch of calls for
 * its owner, also usable as an EIP-7702 delegate) with the pinned solc and writes
 * test/chain/SmartWallets.artifact.json. Run after editing the contract:
 *   npx tsx scripts/smart-wallet-fixtures.ts
 * test/chain/artifact.test.ts fails when the committed artifact is stale.
 */
import { readFileSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { fileURLToPath } from "node:url"
import { EVM_VERSION } from "./test-token.ts"

export const WALLET_SOURCE = fileURLToPath(new URL("../test/chain/SmartWallets.sol", import.meta.url))
export const WALLET_ARTIFACT = fileURLToPath(new URL("../test/chain/SmartWallets.artifact.json", import.meta.url))
const CONTRACTS = ["SmartAccount"] as const

interface SolcOutput {
  readonly errors?: ReadonlyArray<{ readonly severity: string; readonly formattedMessage: string }>
  readonly contracts: Record<string, Record<string, { abi: unknown; evm: { bytecode: { object: string } } }>>
}

/** The contract's ABI and bytecode as JSON text, exactly as committed. */
export const compileSmartWallets = (): string => {
  const solc = createRequire(import.meta.url)("solc") as { compile: (input: string) => string; version: () => string }
  const input = {
    language: "Solidity",
    sources: { "SmartWallets.sol": { content: readFileSync(WALLET_SOURCE, "utf8") } },
    settings: {
      evmVersion: EVM_VERSION,
      optimizer: { enabled: true, runs: 200 },
      metadata: { bytecodeHash: "none" },
      outputSelection: { "*": { "*": ["abi", "evm.bytecode.object"] } }
    }
  }
  const output = JSON.parse(solc.compile(JSON.stringify(input))) as SolcOutput
  const errors = (output.errors ?? []).filter((e) => e.severity === "error")
  if (errors.length > 0) throw new Error(errors.map((e) => e.formattedMessage).join("\n"))
  const artifacts = Object.fromEntries(CONTRACTS.map((name) => {
    const compiled = output.contracts["SmartWallets.sol"]?.[name]
    if (compiled === undefined) throw new Error(`solc produced no ${name}`)
    return [name, { abi: compiled.abi, bytecode: `0x${compiled.evm.bytecode.object}` }]
  }))
  return `${
    JSON.stringify({ compiler: `solc ${solc.version()}`, evmVersion: EVM_VERSION, contracts: artifacts }, null, 2)
  }\n`
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(WALLET_ARTIFACT, compileSmartWallets())
  process.stdout.write(`wrote ${WALLET_ARTIFACT}\n`)
}
