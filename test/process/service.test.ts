import { readFileSync } from "node:fs"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { renderOpenApiForTest } from "../support/openapi.ts"
import { acquireTestDatabase, type TestDatabase } from "../support/database.ts"
import { repoRoot, runScript, type StartedProcess, startServiceProcess } from "../support/process.ts"

const bearer = (key: string) => ({ authorization: `Bearer ${key}` })
const lastLine = (text: string) => text.trim().split("\n").at(-1)?.trim() ?? ""

describe("the service as a process (npm start)", () => {
  let database: TestDatabase
  let service: StartedProcess

  beforeAll(async () => {
    database = await acquireTestDatabase()
    service = await startServiceProcess({ DATABASE_URL: database.url })
  })
  afterAll(async () => {
    await service?.stop("SIGKILL")
    await database?.release()
  })

  it("on an empty database prints a demo test key once, which authenticates", async () => {
    const key = /(cop_test_pk_[0-9A-Za-z]+)/.exec(service.stdout())?.[1]
    expect(key).toBeDefined()
    expect(service.stdout()).toContain("/docs")
    const health = await fetch(`${service.baseUrl}/healthz`)
    expect(health.status).toBe(200)
    const quote = await fetch(`${service.baseUrl}/api/integrations/breb/quote`, { headers: bearer(key!) })
    expect(quote.status).toBe(200)
  })

  it("writes structured JSON log lines that never contain the demo key", async () => {
    const key = /(cop_test_pk_[0-9A-Za-z]+)/.exec(service.stdout())![1]!
    await fetch(`${service.baseUrl}/api/integrations/breb/quote`, { headers: bearer(key) })
    const logLines = service.stdout().split("\n").filter((line) => line.startsWith("{"))
    expect(logLines.length).toBeGreaterThan(0)
    for (const line of logLines) {
      expect(() => JSON.parse(line)).not.toThrow()
      expect(line).not.toContain(key)
    }
    expect(logLines.some((line) => line.includes("\"requestId\""))).toBe(true)
  })

  it("keys CLI: issue prints a working key as the last line, list shows only last 4, revoke disables it", async () => {
    const env = { DATABASE_URL: database.url, LOG_LEVEL: "warn" }
    const issued = await runScript(["scripts/keys.ts", "issue", "acme"], env)
    expect(issued.code).toBe(0)
    const key = lastLine(issued.stdout)
    expect(key).toMatch(/^cop_test_pk_[0-9A-Za-z]{49}$/)
    const ok = await fetch(`${service.baseUrl}/api/integrations/breb/payouts`, { headers: bearer(key) })
    expect(ok.status).toBe(200)

    const listed = await runScript(["scripts/keys.ts", "list"], env)
    expect(listed.stdout).not.toContain(key)
    const row = listed.stdout.split("\n").find((line) => line.includes(" acme ") && line.includes(key.slice(-4)))
    expect(row).toBeDefined()
    const keyId = row!.split(/\s+/)[0]!

    const revoked = await runScript(["scripts/keys.ts", "revoke", keyId], env)
    expect(revoked.code).toBe(0)
    const denied = await fetch(`${service.baseUrl}/api/integrations/breb/payouts`, { headers: bearer(key) })
    expect(denied.status).toBe(401)
    expect(await denied.json()).toEqual({ error: "unknown or revoked API key" })
  })

  it("keys CLI: an unknown command exits 2 with usage", async () => {
    const result = await runScript(["scripts/keys.ts", "rotate"], { DATABASE_URL: database.url })
    expect(result.code).toBe(2)
    expect(result.stderr).toContain("usage")
  })

  it("a restart on the same database prints no new key", async () => {
    const second = await startServiceProcess({ DATABASE_URL: database.url })
    try {
      expect(second.stdout()).not.toMatch(/cop_test_pk_[0-9A-Za-z]{49}/)
      expect(second.stdout()).toContain("keys -- issue")
    } finally {
      await second.stop("SIGKILL")
    }
  })

  it("SIGTERM stops a service that has been serving requests cleanly (exit 0)", async () => {
    const key = /(cop_test_pk_[0-9A-Za-z]+)/.exec(service.stdout())![1]!
    const inFlight = Array.from({ length: 20 }, () =>
      fetch(`${service.baseUrl}/api/integrations/breb/quote`, { headers: bearer(key) }).then((r) => r.status))
    const statuses = await Promise.all(inFlight)
    const code = await service.stop("SIGTERM")
    expect(code).toBe(0)
    expect(statuses.every((status) => status === 200)).toBe(true)
  })
})

describe.concurrent("start-up with a configuration mistake", () => {
  it.each([
    [{ PORT: "abc" }, "PORT"],
    [{ MOCK_OTP_DEBUG_CODE: "12ab" }, "MOCK_OTP_DEBUG_CODE"],
    [{ APP_MODE: "live" }, "APP_MODE"]
  ])("%j exits 1 with one configuration error line naming %s, and no stack trace", async (env, name) => {
    const result = await runScript(["src/main.ts"], { PORT: "0", DATABASE_URL: "", EMBEDDED_DATA_DIR: "/nonexistent/never-started", ...env })
    expect(result.code).toBe(1)
    const errorLines = result.stderr.split("\n").filter((line) => line.startsWith("configuration error: "))
    expect(errorLines).toHaveLength(1)
    expect(errorLines[0]).toContain(name)
    expect(`${result.stdout}${result.stderr}`).not.toMatch(/\n\s+at /)
    expect(result.stdout).not.toContain("listening on")
    expect(result.stdout).not.toContain("migrations")
  })

  it("an unreachable DATABASE_URL exits 1 with one database error line, without the password or a stack trace", async () => {
    const result = await runScript(["src/main.ts"], { PORT: "0", DATABASE_URL: "postgres://partner:s3cret-pw@127.0.0.1:1/payouts" })
    expect(result.code).toBe(1)
    expect(result.stderr.split("\n").filter((line) => line.startsWith("database error: "))).toHaveLength(1)
    expect(result.stderr).toContain("ECONNREFUSED")
    expect(`${result.stdout}${result.stderr}`).not.toContain("s3cret-pw")
    expect(`${result.stdout}${result.stderr}`).not.toMatch(/\n\s+at /)
  })
})

describe("contracts/openapi.json", () => {
  it("is what `npm run openapi` generates from the contract (regenerate it when this fails)", () => {
    const committed = readFileSync(`${repoRoot}/contracts/openapi.json`, "utf8")
    expect(committed).toEqual(renderOpenApiForTest())
  })
})
