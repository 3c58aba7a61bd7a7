/**
 * Compiles test/chain/SwapFixtures.sol (TestCop: an 18-decimal COPm stand-in; TestRouter: a router with a settable
 * price that the local aggregator's calldata calls) with the pinned solc and writes
 * test/chain/SwapFixtures.artifact.json. Run after editing the contracts:
 *   npx tsx scripts/swap-fixtures.ts
 * test/chain/artifact.test.ts fails when the committed artifact is stale.
 */
import { readFileSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { fileURLToPath } from "node:url"
import { EVM_VERSION } from "./test-token.ts"

export const SWAP_SOURCE = fileURLToPath(new URL("../test/chain/SwapFixtures.sol", import.meta.url))
export const SWAP_ARTIFACT = fileURLToPath(new URL("../test/chain/SwapFixtures.artifact.json", import.meta.url))
const CONTRACTS = ["TestCop", "TestRouter"] as const

interface SolcOutput {
  readonly errors?: ReadonlyArray<{ readonly severity: string; readonly formattedMessage: string }>
  readonly contracts: Record<string, Record<string, { abi: unknown; evm: { bytecode: { object: string } } }>>
}

/** Both contracts' ABI and bytecode as JSON text, exactly as committed. */
export const compileSwapFixtures = (): string => {
  const solc = createRequire(import.meta.url)("solc") as { compile: (input: string) => string; version: () => string }
  const input = {
    language: "Solidity",
    sources: { "SwapFixtures.sol": { content: readFileSync(SWAP_SOURCE, "utf8") } },
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
    const compiled = output.contracts["SwapFixtures.sol"]?.[name]
    if (compiled === undefined) throw new Error(`solc produced no ${name}`)
    return [name, { abi: compiled.abi, bytecode: `0x${compiled.evm.bytecode.object}` }]
  }))
  return `${
    JSON.stringify({ compiler: `solc ${solc.version()}`, evmVersion: EVM_VERSION, contracts: artifacts }, null, 2)
  }\n`
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(SWAP_ARTIFACT, compileSwapFixtures())
  process.stdout.write(`wrote ${SWAP_ARTIFACT}\n`)
}
