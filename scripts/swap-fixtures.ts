/**
 * Compiles test/chain/SwapFixtures.sol (TestCop: an 18-decimal COPm stand-in; TestRouter: a router with a settable
 * price that the local aggregator's calldata calls) with the pinned solc and writes
 * test/chain/SwapFixtures.artifact.json. Run after editing the contracts:
 *   npx tsx scripts/swap-fixtures.ts
 * test/chain/artifact.test.ts fails when the committed artifact is stale.
 */
import { writeFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { fixturesArtifact } from "./solc.ts"

export const SWAP_SOURCE = fileURLToPath(new URL("../test/chain/SwapFixtures.sol", import.meta.url))
export const SWAP_ARTIFACT = fileURLToPath(new URL("../test/chain/SwapFixtures.artifact.json", import.meta.url))

/** Both contracts' ABI and bytecode as JSON text, exactly as committed. */
export const compileSwapFixtures = (): string => fixturesArtifact(SWAP_SOURCE, ["TestCop", "TestRouter"])

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(SWAP_ARTIFACT, compileSwapFixtures())
  process.stdout.write(`wrote ${SWAP_ARTIFACT}\n`)
}
