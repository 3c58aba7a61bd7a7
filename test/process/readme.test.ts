import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { repoRoot } from "../support/process.ts"

describe("README", () => {
  it("has a configuration row for every environment variable src/config/Config.ts reads", () => {
    const readme = readFileSync(`${repoRoot}/README.md`, "utf8")
    const documented = new Set([...readme.matchAll(/^\| `([A-Z][A-Z0-9_]+)` \|/gm)].map((m) => m[1]))
    const read = [...readFileSync(`${repoRoot}/src/config/Config.ts`, "utf8").matchAll(/\(\s*"([A-Z][A-Z0-9_]+)"/g)]
      .map((m) => m[1])
    expect(read.length).toBeGreaterThan(20)
    expect(read.filter((name) => !documented.has(name))).toEqual([])
  })

  it("puts the two commands first", () => {
    const readme = readFileSync(`${repoRoot}/README.md`, "utf8")
    const firstBlock = /```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? ""
    expect(firstBlock).toContain("npm ci && npm start")
    expect(firstBlock).toContain("npm ci && npm test")
  })
})
