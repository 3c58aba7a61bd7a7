import { readFileSync } from "node:fs"
import { expect, it } from "vitest"
import { ARTIFACT, compileTestToken } from "../../scripts/test-token.ts"

it("the committed TestUsd artifact is what the pinned solc makes of TestUsd.sol (else: npx tsx scripts/test-token.ts)", () => {
  expect(compileTestToken()).toBe(readFileSync(ARTIFACT, "utf8"))
})
