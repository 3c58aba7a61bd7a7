/**
 * scripts/ and test/ import one way only: tests may use the scripts (simulators, the local stack, the money
 * properties), a script never imports from test/. Read from the sources, like test/layers.test.ts.
 */
import { readdirSync, readFileSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"
import { describe, expect, it } from "vitest"
import { repoRoot } from "./support/process.ts"

const scriptsDir = join(repoRoot, "scripts")

const scripts = readdirSync(scriptsDir, { recursive: true, encoding: "utf8" })
  .filter((path) => /\.(ts|mjs)$/.test(path))
  .map((path) => ({ path: join(scriptsDir, path), text: readFileSync(join(scriptsDir, path), "utf8") }))

/** `import … from`, `export … from`, a bare `import "…"` and a dynamic `import("…")`, relative ones only. */
const IMPORT =
  /(?:^|\s)(?:import|export)\s[^"';]*?from\s+["'](\.{1,2}\/[^"']+)["']|(?:^|\s)import\s*\(?\s*["'](\.{1,2}\/[^"']+)["']/g

const importsIntoTest = scripts.flatMap(({ path, text }) =>
  [...text.matchAll(IMPORT)].flatMap((match) => {
    const target = relative(repoRoot, resolve(dirname(path), (match[1] ?? match[2])!))
    const line = text.slice(0, match.index).split("\n").length
    return target.startsWith("test/") ? [`${relative(repoRoot, path)}:${line} -> ${target}`] : []
  })
)

describe("scripts/ and test/", () => {
  it("reads the scripts", () => {
    expect(scripts.map(({ path }) => relative(repoRoot, path))).toContain("scripts/live-local.ts")
  })

  it("no script imports from test/", () => {
    expect(importsIntoTest).toEqual([])
  })
})
