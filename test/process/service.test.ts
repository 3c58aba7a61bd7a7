import { existsSync, readFileSync } from "node:fs"
import { type AddressInfo, createServer } from "node:net"
import { chmod, mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { startEmbeddedPostgres } from "../../src/db/EmbeddedPostgres.ts"
import { renderOpenApiForTest } from "../support/openapi.ts"
import { startupFailure } from "../support/startup.ts"
import {
  repoRoot,
  runKeysCli,
  runScript,
  runWalkthrough,
  type StartedProcess,
  startServiceProcess
} from "../support/process.ts"

const bearer = (key: string) => ({ authorization: `Bearer ${key}` })
const lastLine = (text: string) => text.trim().split("\n").at(-1)?.trim() ?? ""

/** The way the README says to run it on a fresh machine: no DATABASE_URL, so the embedded PostgreSQL. */
describe("npm start on the embedded PostgreSQL (no DATABASE_URL)", () => {
  let root: string
  let dataDir: string
  let service: StartedProcess
  const env = () => ({
    DATABASE_URL: "",
    EMBEDDED_DATA_DIR: dataDir,
    LOG_LEVEL: "info",
    MOCK_LIFECYCLE_DELAY_MS: "300",
    API_KEY_CACHE_MS: "300"
  })
  const demoKey = () => /(cop_test_pk_[0-9A-Za-z]+)/.exec(service.stdout())![1]!

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), "npm-start-"))
    await chmod(root, 0o755)
    dataDir = join(root, "postgres")
    service = await startServiceProcess(env())
  })
  afterAll(async () => {
    await service?.stop("SIGKILL")
    // a server left by a failed test: adopt it (its starter is gone) and stop it
    if (existsSync(join(dataDir, "postmaster.pid"))) await (await startEmbeddedPostgres(dataDir)).stop()
    await rm(root, { recursive: true, force: true })
  })

  it("on a fresh data directory prints a demo test key once, which authenticates, and the docs URL", async () => {
    expect(service.stdout()).toMatch(/cop_test_pk_[0-9A-Za-z]{49}/)
    expect(service.stdout()).toContain("/docs")
    expect(service.stdout()).toContain(`database: embedded PostgreSQL (${dataDir})`)
    const health = await fetch(`${service.baseUrl}/healthz`)
    expect(health.status).toBe(200)
    const quote = await fetch(`${service.baseUrl}/api/integrations/breb/quote`, { headers: bearer(demoKey()) })
    expect(quote.status).toBe(200)
  })

  it("writes only JSON log lines to stdout (the banner goes to stderr), never the demo key or the database password", async () => {
    await fetch(`${service.baseUrl}/api/integrations/breb/quote`, { headers: bearer(demoKey()) })
    const password = JSON.parse(readFileSync(join(dataDir, "embedded-credentials.json"), "utf8")).password as string
    const { stderr, stdout } = service.streams()
    expect(stderr).toContain("listening on")
    expect(stderr).toContain(demoKey())
    const logLines = stdout.split("\n").filter((line) => line !== "")
    expect(logLines.length).toBeGreaterThan(0)
    for (const line of logLines) {
      expect(() => JSON.parse(line), line).not.toThrow()
      expect(line).not.toContain(demoKey())
    }
    expect(service.stdout()).not.toContain(password)
    expect(logLines.some((line) => line.includes("\"requestId\""))).toBe(true)
  })

  it("runs the README walkthrough as written, to a completed payout, printing JSON; the receiver's registration curl works after it in the same shell", async () => {
    const readme = readFileSync(join(repoRoot, "README.md"), "utf8")
    const registration = /A receiver in 20 lines(?:(?!```)[\s\S])*```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? "false"
    const outcome = await runWalkthrough(service.baseUrl, demoKey(), registration)
    expect(outcome.output).toContain("status: completed")
    expect(outcome.code, outcome.output).toBe(0)
    expect(outcome.output).toMatch(/"display":"1 USD = \d+\.\d{2} COP"/)
    expect(outcome.output).toContain("\"kycStatus\":\"approved\"")
    // the customer's KYC read after the verify shows the e-mail masked
    expect(outcome.output).toMatch(/"kycStatus":"approved","kycUrl":null,"email":"a\*\*\*@example\.com"/)
    // step 6 prints the page as JSON, not Node's dump of an array ("[ {", "payoutId: '…'")
    expect(outcome.output).toMatch(/\{"integrationId":"int_\w+","items":\[\{"payoutId":"po_\w+"/)
    expect(outcome.output).not.toMatch(/payoutId: '/)
    // step 7: a payout that did not go through says why, and where the deposit went; step 8 cancels one
    expect(outcome.output).toMatch(/\{"code":"returned_by_bank","category":"rail","retryable":true,"message":"[^"]+"/)
    expect(outcome.output).toMatch(
      /\{"status":"(sent|verified)","to":"0x52908400098527886E0F7030069857D2E4169EE7","token":"USDC"/
    )
    expect(outcome.output).toMatch(/^expired$/m)
    // then the webhook endpoint is registered under /api/integrations, its secret shown
    expect(outcome.output).toMatch(/"url":"http:\/\/127\.0\.0\.1:4000\/hooks"/)
    expect(outcome.output).toMatch(/"secret":"whsec_/)
  })

  it("keys CLI joins the running server: issue needs --create for a new name, the key works at once, list shows only its last 4 and its last use, revoke disables it; an unknown command exits 2", async () => {
    const [typo, unknown] = await Promise.all([
      runKeysCli(["issue", "acme"], env()),
      runKeysCli(["frobnicate"], env())
    ])
    expect(typo.code).toBe(2)
    expect(typo.stderr).toContain(`no integration named "acme": check the spelling, or pass --create to create it`)
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toContain("usage")
    const issued = await runKeysCli(["issue", "acme", "--create"], env())
    expect(issued.code, issued.stderr).toBe(0)
    expect(issued.stderr).toContain(
      `keys: connecting to the embedded PostgreSQL (${dataDir}), starting it unless a server runs there…`
    )
    const key = lastLine(issued.stdout)
    expect(key).toMatch(/^cop_test_pk_[0-9A-Za-z]{49}$/)
    const ok = await fetch(`${service.baseUrl}/api/integrations/breb/payouts`, { headers: bearer(key) })
    expect(ok.status).toBe(200)

    const listed = await runKeysCli(["list"], env())
    expect(listed.stdout).not.toContain(key)
    const row = listed.stdout.split("\n").find((line) => line.includes(" acme ") && line.includes(key.slice(-4)))
    expect(row).toMatch(/ last used \d{4}-\d{2}-\d{2}T/)
    const keyId = row!.split(/\s+/)[0]!

    const revoked = await runKeysCli(["revoke", keyId], env())
    expect(revoked.code).toBe(0)
    // the server remembers an active key for API_KEY_CACHE_MS (300 ms here): revocation applies within that bound
    const denied = await vi.waitFor(async () => {
      const answer = await fetch(`${service.baseUrl}/api/integrations/breb/payouts`, { headers: bearer(key) })
      expect(answer.status).toBe(401)
      return answer
    }, { timeout: 5000, interval: 25 })
    expect(await denied.json()).toEqual({ error: "unknown or revoked API key" })
  })

  it("prints a dashboard sign-in link at start-up, and keys dashboard-link makes another; each signs in once", async () => {
    const open = (url: string) =>
      fetch(`${service.baseUrl}${new URL(url).pathname}${new URL(url).search}`, { redirect: "manual" })
    const printed = /(http:\/\/127\.0\.0\.1:\d+\/dashboard\/sign-in\?token=[\w-]{43})\n/.exec(service.streams().stderr)
      ?.[1]
    expect(printed, service.streams().stderr).toBeDefined()
    expect(printed!.startsWith(service.baseUrl)).toBe(true)
    const signedIn = await open(printed!)
    expect(signedIn.status).toBe(303)
    expect(signedIn.headers.get("set-cookie")).toMatch(/^cop_dashboard=[\w-]{43};/)
    expect((await open(printed!)).status).toBe(410)

    const made = await runKeysCli(["dashboard-link", "demo"], env())
    expect(made.code, made.stderr).toBe(0)
    const url = lastLine(made.stdout)
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:8787\/dashboard\/sign-in\?token=[\w-]{43}$/)
    expect((await open(url)).status).toBe(303)
    const unknown = await runKeysCli(["dashboard-link", "nobody"], env())
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toContain(`no integration named "nobody"`)
  })

  it("keys rotate: the new key works at once, the old one for the stated overlap (0: it stops within the cache bound); list --json tells", async () => {
    const keyOf = async (args: Array<string>) => {
      const result = await runKeysCli([...args], env())
      expect(result.code, result.stderr).toBe(0)
      return lastLine(result.stdout)
    }
    const listJson = async () => {
      const result = await runKeysCli(["list", "--json"], env())
      expect(result.code, result.stderr).toBe(0)
      return JSON.parse(result.stdout) as Array<Record<string, unknown>>
    }
    const status = async (key: string) =>
      (await fetch(`${service.baseUrl}/api/integrations/breb/payouts`, { headers: bearer(key) })).status
    const first = await keyOf(["issue", "rotating", "--create", "--expires", "30d"])
    expect(await status(first)).toBe(200)
    const firstRow = (await listJson()).find((row) => row["last4"] === first.slice(-4))!
    expect(firstRow).toMatchObject({ integrationName: "rotating", state: "active", kind: "test", replacedBy: null })
    expect(Date.parse(firstRow["expiresAt"] as string) - Date.now()).toBeGreaterThan(29 * 86_400_000)

    const second = await keyOf(["rotate", firstRow["id"] as string, "--overlap", "1h"])
    expect(await status(second)).toBe(200)
    expect(await status(first)).toBe(200) // inside its overlap
    const afterRotation = await listJson()
    const rotated = afterRotation.find((row) => row["id"] === firstRow["id"])!
    const secondRow = afterRotation.find((row) => row["last4"] === second.slice(-4))!
    expect(rotated["replacedBy"]).toBe(secondRow["id"])
    expect(Math.abs(Date.parse(rotated["expiresAt"] as string) - Date.now() - 3_600_000)).toBeLessThan(60_000)
    expect(secondRow["expiresAt"]).toBe(firstRow["expiresAt"]) // the rotation keeps the integration's expiry policy
    expect(JSON.stringify(afterRotation)).not.toContain(first)

    const third = await keyOf(["rotate", secondRow["id"] as string, "--overlap", "0"])
    expect(await status(third)).toBe(200)
    await vi.waitFor(async () => expect(await status(second)).toBe(401), { timeout: 5000, interval: 25 })
    expect((await listJson()).find((row) => row["id"] === secondRow["id"])!["state"]).toBe("expired")
  })

  it("SIGTERM: exits 0 and stops the embedded server it started", async () => {
    expect(existsSync(join(dataDir, "postmaster.pid"))).toBe(true)
    const code = await service.stop("SIGTERM")
    expect(code).toBe(0)
    expect(existsSync(join(dataDir, "postmaster.pid"))).toBe(false)
    expect(service.stdout()).toContain("SIGTERM: shutting down")
  })

  it("a restart on the same data directory keeps the data: no new key, the demo key still works", async () => {
    const firstKey = demoKey()
    service = await startServiceProcess(env())
    expect(service.stdout()).not.toMatch(/cop_test_pk_[0-9A-Za-z]{49}/)
    expect(service.stdout()).toContain("keys -- issue")
    expect(service.streams().stderr).toMatch(
      /dashboard for "demo" .*\n\s*http:\/\/127\.0\.0\.1:\d+\/dashboard\/sign-in\?token=/
    )
    const quote = await fetch(`${service.baseUrl}/api/integrations/breb/quote`, { headers: bearer(firstKey) })
    expect(quote.status).toBe(200)
    expect(await service.stop("SIGTERM")).toBe(0)
  })
})

describe("start-up with a configuration mistake", () => {
  it.each([
    [{ PORT: "abc" }, "PORT"],
    [{ MOCK_OTP_DEBUG_CODE: "12ab" }, "MOCK_OTP_DEBUG_CODE"],
    [{ APP_MODE: "live" }, "APP_MODE"],
    [{ BREB_MAX_COP: "-5" }, "BREB_MAX_COP"],
    [{ DATABASE_URL: "base" }, "DATABASE_URL"],
    [{ DATABASE_URL: "mysql://root@127.0.0.1/test" }, "DATABASE_URL"]
  ])("%j is one configuration error line naming %s, before any database work", async (env, name) => {
    const line = await startupFailure({ DATABASE_URL: "postgres://nobody@127.0.0.1:1/never-reached", ...env })
    expect(line).toMatch(/^configuration error: /)
    expect(line).toContain(name)
    expect(line).not.toContain("\n")
  })

  it("an unreachable database is one database error line naming DATABASE_URL and the reason, without the password", async () => {
    const line = await startupFailure({ DATABASE_URL: "postgres://partner:s3cret-pw@127.0.0.1:1/payouts" })
    expect(line).toBe(
      "database error: cannot connect to DATABASE_URL (PostgreSQL 127.0.0.1:1/payouts): connection refused (ECONNREFUSED)"
    )
  })
})

describe.concurrent("start-up failures of the process", () => {
  it("a configuration mistake exits 1 with that one line on stderr and no stack trace", async () => {
    const result = await runScript(["src/main.ts"], {
      PORT: "abc",
      DATABASE_URL: "",
      EMBEDDED_DATA_DIR: "/nonexistent/never-started"
    })
    expect(result.code).toBe(1)
    const errorLines = result.stderr.split("\n").filter((line) => line.startsWith("configuration error: "))
    expect(errorLines).toHaveLength(1)
    expect(errorLines[0]).toContain("PORT")
    expect(`${result.stdout}${result.stderr}`).not.toMatch(/\n\s+at /)
    expect(result.stdout).not.toContain("listening on")
    expect(result.stdout).not.toContain("migrations")
  })

  it("LOG_LEVEL that is not a level exits 1 with one line naming it and the levels there are", async () => {
    const result = await runScript(["src/main.ts"], {
      LOG_LEVEL: "verbose",
      DATABASE_URL: "",
      EMBEDDED_DATA_DIR: "/nonexistent/never-started"
    })
    expect(result.code).toBe(1)
    expect(result.stderr.trim()).toBe(
      `configuration error: LOG_LEVEL: must be one of all, trace, debug, info, warn, error, fatal, off (got "verbose")`
    )
    expect(result.stdout).toBe("")
  })

  it("a port in use exits 1 with one listen error line naming PORT, no stack trace", async () => {
    const holder = createServer()
    await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve))
    const port = (holder.address() as AddressInfo).port
    try {
      const result = await runScript(["src/main.ts"], {
        PORT: String(port),
        DATABASE_URL: "postgres://nobody@127.0.0.1:1/never-reached"
      })
      expect(result.code).toBe(1)
      const lines = result.stderr.split("\n").filter((line) => line.startsWith("listen error: "))
      expect(lines).toEqual([
        `listen error: PORT ${port} is already in use on 127.0.0.1:${port} (EADDRINUSE); stop what holds it, or set PORT to a free port (0 picks one)`
      ])
      expect(`${result.stdout}${result.stderr}`).not.toMatch(/\n\s+at /)
    } finally {
      holder.close()
    }
  })

  it("an unreachable DATABASE_URL exits 1 with one database error line, without the password or a stack trace", async () => {
    const result = await runScript(["src/main.ts"], {
      PORT: "0",
      DATABASE_URL: "postgres://partner:s3cret-pw@127.0.0.1:1/payouts"
    })
    expect(result.code).toBe(1)
    expect(result.stderr.split("\n").filter((line) => line.startsWith("database error: "))).toEqual([
      "database error: cannot connect to DATABASE_URL (PostgreSQL 127.0.0.1:1/payouts): connection refused (ECONNREFUSED)"
    ])
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
