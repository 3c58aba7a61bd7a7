/**
 * Compiles test/chain/SmartWallets.sol (SmartAccount: a minimal smart-contract wallet that runs a batch of calls for
 * its owner, also usable as an EIP-7702 delegate) with the pinned solc and writes
 * test/chain/SmartWallets.artifact.json. Run after editing the contract:
 *   npx tsx scripts/smart-wallet-fixtures.ts
 * test/chain/artifact.test.ts fails when the committed artifact is stale.
 */
import { writeFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { fixturesArtifact } from "./solc.ts"

export const WALLET_SOURCE = fileURLToPath(new URL("../test/chain/SmartWallets.sol", import.meta.url))
export const WALLET_ARTIFACT = fileURLToPath(new URL("../test/chain/SmartWallets.artifact.json", import.meta.url))

/** The contract's ABI and bytecode as JSON text, exactly as committed. */
export const compileSmartWallets = (): string => fixturesArtifact(WALLET_SOURCE, ["SmartAccount"])

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(WALLET_ARTIFACT, compileSmartWallets())
  process.stdout.write(`wrote ${WALLET_ARTIFACT}\n`)
}
