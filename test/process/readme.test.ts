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

  it("names the TypeScript major openapi-typescript needs: its peer dependency's, the one this repository pins", () => {
    const readme = readFileSync(`${repoRoot}/README.md`, "utf8")
    const json = (path: string) => JSON.parse(readFileSync(`${repoRoot}/${path}`, "utf8")) as Record<string, any>
    const generator = json("node_modules/openapi-typescript/package.json")
    const peer = /^\^(\d+)\.x$/.exec(String(generator["peerDependencies"]["typescript"]))?.[1]
    const pinned = String(json("package.json")["devDependencies"]["typescript"]).split(".")[0]
    expect(peer).toBe(pinned)
    expect(readme).toContain(
      `\`openapi-typescript\` ${generator["version"].split(".")[0]} needs **TypeScript ${peer}**`
    )
    expect(readme).toContain(
      `npm install --save-dev openapi-typescript@${generator["version"].split(".")[0]} typescript@${peer}`
    )
  })

  it("puts the two commands first", () => {
    const readme = readFileSync(`${repoRoot}/README.md`, "utf8")
    const firstBlock = /```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? ""
    expect(firstBlock).toContain("npm ci && npm start")
    expect(firstBlock).toContain("npm ci && npm test")
  })
})
