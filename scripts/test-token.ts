/**
 * Compiles test/chain/TestUsd.sol with the pinned solc (devDependency) and writes its ABI and bytecode to
 * test/chain/TestUsd.artifact.json, which the chain tests deploy to anvil. Run after editing the contract:
 *   npx tsx scripts/test-token.ts
 * test/chain/artifact.test.ts fails when the committed artifact is stale.
 */
import { writeFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { compileSolidity, EVM_VERSION } from "./solc.ts"

export const SOURCE = fileURLToPath(new URL("../test/chain/TestUsd.sol", import.meta.url))
export const ARTIFACT = fileURLToPath(new URL("../test/chain/TestUsd.artifact.json", import.meta.url))

/** The artifact as JSON text, exactly as committed. */
export const compileTestToken = (): string => {
  const { compiler, contracts } = compileSolidity(SOURCE, ["TestUsd"])
  const { abi, bytecode } = contracts["TestUsd"]!
  return `${JSON.stringify({ contractName: "TestUsd", compiler, evmVersion: EVM_VERSION, abi, bytecode }, null, 2)}\n`
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(ARTIFACT, compileTestToken())
  process.stdout.write(`wrote ${ARTIFACT}\n`)
}
