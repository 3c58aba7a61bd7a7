import { spawn } from "node:child_process"
import { once } from "node:events"
import { readFileSync } from "node:fs"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { acquireTestDatabase, type TestDatabase } from "../support/database.ts"
import { repoRoot, type StartedProcess, startServiceProcess } from "../support/process.ts"

const walkthrough = (): string => {
  const readme = readFileSync(`${repoRoot}/README.md`, "utf8")
  const block = /<!-- walkthrough:start -->\s*```sh\n([\s\S]*?)```\s*<!-- walkthrough:end -->/.exec(readme)?.[1]
  if (block === undefined) throw new Error("README.md has no walkthrough block")
  return block
}

describe("README", () => {
  let database: TestDatabase
  let service: StartedProcess

  beforeAll(async () => {
    database = await acquireTestDatabase()
    service = await startServiceProcess({ DATABASE_URL: database.url, MOCK_LIFECYCLE_DELAY_MS: "300" })
  })
  afterAll(async () => {
    await service?.stop("SIGKILL")
    await database?.release()
  })

  it("has a configuration row for every environment variable src/Config.ts reads", () => {
    const readme = readFileSync(`${repoRoot}/README.md`, "utf8")
    const documented = new Set([...readme.matchAll(/^\| `([A-Z][A-Z0-9_]+)` \|/gm)].map((m) => m[1]))
    const read = [...readFileSync(`${repoRoot}/src/Config.ts`, "utf8").matchAll(/\(\s*"([A-Z][A-Z0-9_]+)"/g)].map((m) => m[1])
    expect(read.length).toBeGreaterThan(20)
    expect(read.filter((name) => !documented.has(name))).toEqual([])
  })

  it("puts the two commands first", () => {
    const readme = readFileSync(`${repoRoot}/README.md`, "utf8")
    const firstBlock = /```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? ""
    expect(firstBlock).toContain("npm ci && npm start")
    expect(firstBlock).toContain("npm ci && npm test")
  })

  it("walkthrough runs as written against `npm start` and ends with a completed payout", async () => {
    const key = /(cop_test_pk_[0-9A-Za-z]+)/.exec(service.stdout())?.[1]
    expect(key).toBeDefined()
    const child = spawn("bash", ["-euo", "pipefail", "-c", walkthrough()], {
      env: { ...process.env, KEY: key!, BASE: service.baseUrl }
    })
    let output = ""
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")))
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")))
    const [code] = (await once(child, "exit")) as [number | null]
    expect(output).toContain("status: completed")
    expect(code, output).toBe(0)
    expect(output).toMatch(/"display":"1 USD = \d+\.\d{2} COP"/)
    expect(output).toContain("\"kycStatus\":\"approved\"")
  })
})
