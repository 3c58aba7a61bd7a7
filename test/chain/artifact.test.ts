import { readFileSync } from "node:fs"
import { expect, it } from "vitest"
import { compileSmartWallets, WALLET_ARTIFACT } from "../../scripts/smart-wallet-fixtures.ts"
import { compileSwapFixtures, SWAP_ARTIFACT } from "../../scripts/swap-fixtures.ts"
import { ARTIFACT, compileTestToken } from "../../scripts/test-token.ts"

it("the committed TestUsd artifact is what the pinned solc makes of TestUsd.sol (else: npx tsx scripts/test-token.ts)", () => {
  expect(compileTestToken()).toBe(readFileSync(ARTIFACT, "utf8"))
})

it("the committed SwapFixtures artifact is what the pinned solc makes of SwapFixtures.sol (else: npx tsx scripts/swap-fixtures.ts)", () => {
  expect(compileSwapFixtures()).toBe(readFileSync(SWAP_ARTIFACT, "utf8"))
})

it("the committed SmartWallets artifact is what the pinned solc makes of SmartWallets.sol (else: npx tsx scripts/smart-wallet-fixtures.ts)", () => {
  expect(compileSmartWallets()).toBe(readFileSync(WALLET_ARTIFACT, "utf8"))
})
