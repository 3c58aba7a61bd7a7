/**
 * The pinned solc (devDependency) over one Solidity file of test/chain, with the settings every committed artifact
 * is built with. scripts/test-token.ts, swap-fixtures.ts and smart-wallet-fixtures.ts write their artifacts from it;
 * test/chain/artifact.test.ts fails when a committed one is stale.
 */
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { basename } from "node:path"

export const EVM_VERSION = "cancun"

export interface Compiled {
  readonly abi: unknown
  /** 0x-prefixed creation bytecode. */
  readonly bytecode: string
}

interface SolcOutput {
  readonly errors?: ReadonlyArray<{ readonly severity: string; readonly formattedMessage: string }>
  readonly contracts: Record<string, Record<string, { abi: unknown; evm: { bytecode: { object: string } } }>>
}

/** The named contracts of `source` (a path), compiled; the compiler's version as the artifacts record it. */
export const compileSolidity = (source: string, contracts: ReadonlyArray<string>) => {
  const solc = createRequire(import.meta.url)("solc") as { compile: (input: string) => string; version: () => string }
  const file = basename(source)
  const input = {
    language: "Solidity",
    sources: { [file]: { content: readFileSync(source, "utf8") } },
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
  const compiled = Object.fromEntries(contracts.map((name): [string, Compiled] => {
    const contract = output.contracts[file]?.[name]
    if (contract === undefined) throw new Error(`solc produced no ${name}`)
    return [name, { abi: contract.abi, bytecode: `0x${contract.evm.bytecode.object}` }]
  }))
  return { compiler: `solc ${solc.version()}`, contracts: compiled }
}

/** A fixtures artifact as JSON text, exactly as committed: `{ compiler, evmVersion, contracts: { name: … } }`. */
export const fixturesArtifact = (source: string, contracts: ReadonlyArray<string>): string => {
  const { compiler, contracts: compiled } = compileSolidity(source, contracts)
  return `${JSON.stringify({ compiler, evmVersion: EVM_VERSION, contracts: compiled }, null, 2)}\n`
}
