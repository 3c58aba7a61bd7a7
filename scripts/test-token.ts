/**
 * Compiles test/chain/TestUsd.sol with the pinned solc (devDependency) and writes its ABI and bytecode to
 * test/chain/TestUsd.artifact.json, which the chain tests deploy to anvil. Run after editing the contract:
 *   npx tsx scripts/test-token.ts
 * test/chain/artifact.test.ts fails when the committed artifact is stale.
 */
import { readFileSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { fileURLToPath } from "node:url"

export const SOURCE = fileURLToPath(new URL("../test/chain/TestUsd.sol", import.meta.url))
export const ARTIFACT = fileURLToPath(new URL("../test/chain/TestUsd.artifact.json", import.meta.url))
export const EVM_VERSION = "cancun"

interface SolcOutput {
  readonly errors?: ReadonlyArray<{ readonly severity: string; readonly formattedMessage: string }>
  readonly contracts: Record<string, Record<string, { abi: unknown; evm: { bytecode: { object: string } } }>>
}

/** The artifact as JSON text, exactly as committed. */
export const compileTestToken = (): string => {
  const solc = createRequire(import.meta.url)("solc") as { compile: (input: string) => string; version: () => string }
  const input = {
    language: "Solidity",
    sources: { "TestUsd.sol": { content: readFileSync(SOURCE, "utf8") } },
    settings: {
      evmVersion: EVM_VERSION,
      optimizer: { enabled: true, runs: 200 },
      metadata: { bytecodeHash: "none" },
      outputSelection: { "*": { TestUsd: ["abi", "evm.bytecode.object"] } }
    }
  }
  const output = JSON.parse(solc.compile(JSON.stringify(input))) as SolcOutput
  const errors = (output.errors ?? []).filter((e) => e.severity === "error")
  if (errors.length > 0) throw new Error(errors.map((e) => e.formattedMessage).join("\n"))
  const compiled = output.contracts["TestUsd.sol"]?.["TestUsd"]
  if (compiled === undefined) throw new Error("solc produced no TestUsd contract")
  const artifact = {
    contractName: "TestUsd",
    compiler: `solc ${solc.version()}`,
    evmVersion: EVM_VERSION,
    abi: compiled.abi,
    bytecode: `0x${compiled.evm.bytecode.object}`
  }
  return `${JSON.stringify(artifact, null, 2)}\n`
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(ARTIFACT, compileTestToken())
  process.stdout.write(`wrote ${ARTIFACT}\n`)
}
