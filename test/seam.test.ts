/**
 * The mock/live seam stays honest: only src/App.ts picks Layers by mode, and mock behaviour lives in files named
 * *Mock*. Read from the sources, so a new `if (mode === "mock")` in a domain service fails here.
 */
import { readdirSync, readFileSync } from "node:fs"
import { basename, join, relative } from "node:path"
import { describe, expect, it } from "vitest"
import { repoRoot } from "./support/process.ts"

const srcDir = join(repoRoot, "src")

const sources = readdirSync(srcDir, { recursive: true, encoding: "utf8" })
  .filter((path) => path.endsWith(".ts"))
  .map((path) => ({ path: relative(repoRoot, join(srcDir, path)), text: readFileSync(join(srcDir, path), "utf8") }))

const knowsMock = (path: string) => path === "src/App.ts" || basename(path).includes("Mock")

const offending = (pattern: RegExp) =>
  sources
    .filter(({ path }) => !knowsMock(path))
    .flatMap(({ path, text }) =>
      text.split("\n").flatMap((line, i) => (pattern.test(line) ? [`${path}:${i + 1}: ${line.trim()}`] : []))
    )

describe("the mock/live seam", () => {
  it("reads the sources", () => {
    expect(sources.map(({ path }) => path)).toContain("src/payouts/PayoutService.ts")
  })

  it("only App.ts and *Mock* files branch on the mode or on a mock scenario", () => {
    expect(offending(/isScenario\(|mode [!=]== ["']|config\.mode/)).toEqual([])
  })

  it("only App.ts and *Mock* files import a *Mock* module", () => {
    expect(offending(/^import .* from "[^"]*Mock[^"/]*\.ts"/)).toEqual([])
  })

  it("no handler reads the X-Mock-Scenario header (the mock's API-level middleware does)", () => {
    // A read: `headers["x-mock-scenario"]` or `.get("x-mock-scenario")` (the docs page may name it).
    expect(offending(/\[\s*["']x-mock-scenario["']\s*\]|\.get\(\s*["']x-mock-scenario["']/i)).toEqual([])
  })
})
