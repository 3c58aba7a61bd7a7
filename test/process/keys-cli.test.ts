/**
 * The keys CLI's command line, as an operator meets it: help in every usual spelling (exit 0, on stdout), usage
 * errors before any database is involved (exit 2), and a database that does not answer: one line saying what it is
 * connecting to while it waits, then one line saying why it gave up (exit 1, no stack trace); a configuration
 * mistake is one line too.
 */
import { spawn } from "node:child_process"
import { once } from "node:events"
import { createServer, type Server, type Socket } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { repoRoot, runKeysCli } from "../support/process.ts"

/** A TCP port that accepts connections and never says anything: a database that does not answer. */
let silent: Server
const held: Array<Socket> = []
/** A port nothing listens on. */
let closedPort: number

beforeAll(async () => {
  silent = createServer((socket) => held.push(socket)).listen(0, "127.0.0.1")
  await once(silent, "listening")
  const probe = createServer().listen(0, "127.0.0.1")
  await once(probe, "listening")
  closedPort = (probe.address() as { port: number }).port
  await new Promise((resolve) => probe.close(resolve))
})
afterAll(() => {
  for (const socket of held) socket.destroy()
  silent?.close()
})

const unreachable = () => ({ DATABASE_URL: `postgres://postgres@127.0.0.1:${closedPort}/keys`, APP_MODE: "mock" })

/** `npm run -s keys -- …`, through the npm that runs this test when there is one. */
const npmRunKeys = async (args: ReadonlyArray<string>) => {
  const npmCli = process.env["npm_execpath"]
  const [command, npmArgs] = npmCli?.endsWith(".js")
    ? [process.execPath, [npmCli, "run", "-s", "keys", "--", ...args]]
    : ["npm", ["run", "-s", "keys", "--", ...args]]
  const child = spawn(command, npmArgs, {
    cwd: repoRoot,
    env: { ...process.env, ...unreachable(), npm_config_update_notifier: "false" }
  })
  let stdout = ""
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")))
  const [code] = (await once(child, "exit")) as [number | null]
  return { code, stdout }
}

describe("keys CLI command line", () => {
  it.each(["--help", "-h", "help", "issue --help", "rotate key_x --overlap 1h --help", "list --no-such-option --help"])(
    "keys %s prints the usage and what each command does on stdout, exit 0, without a database",
    async (line) => {
      const result = await runKeysCli(line.split(" "), unreachable())
      expect(result.code, result.stderr).toBe(0)
      expect(result.stdout).toContain("usage: keys issue <integration-name>")
      expect(result.stdout).toContain("revoke  stops a key at once")
      expect(result.stdout).toContain("Exit codes:")
      expect(result.stderr).toBe("")
    }
  )

  it("npm run -s keys -- --help answers the same", async () => {
    const result = await npmRunKeys(["--help"])
    expect(result.code).toBe(0)
    expect(result.stdout.startsWith("usage: keys issue <integration-name>")).toBe(true)
  })

  it("--scopes naming no known scope, or given to another command, is a usage error (exit 2) before any database", async () => {
    const [misspelt, empty, elsewhere] = await Promise.all([
      runKeysCli(["issue", "acme", "--scopes", "payouts:read,payouts:reed"], unreachable()),
      runKeysCli(["issue", "acme", "--scopes", ","], unreachable()),
      runKeysCli(["rotate", "key_1", "--scopes", "payouts:read"], unreachable())
    ])
    for (const result of [misspelt, empty]) {
      expect(result.code).toBe(2)
      expect(result.stderr).toMatch(
        /^--scopes: a comma-separated list of payouts:read, payouts:write, .*sandbox:write, not "/
      )
    }
    expect(elsewhere.code).toBe(2)
    expect(elsewhere.stderr.startsWith("--scopes: only with issue")).toBe(true)
  })

  it("an unknown command or option is a usage error (exit 2) before any database is involved", async () => {
    const [unknown, option, none] = await Promise.all([
      runKeysCli(["frobnicate"], unreachable()),
      runKeysCli(["list", "--bogus"], unreachable()),
      runKeysCli([], unreachable())
    ])
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toContain(`unknown command "frobnicate"\nusage: keys issue`)
    expect(option.code).toBe(2)
    expect(option.stderr).toContain("Unknown option '--bogus'")
    expect(none.code).toBe(2)
    expect(none.stderr.startsWith("usage: keys issue")).toBe(true)
  })

  it("a configuration mistake is one line naming the variable and the rule: exit 1, no stack", async () => {
    const result = await runKeysCli(["list"], { DATABASE_URL: "not-a-url", APP_MODE: "mock" })
    expect(result.code).toBe(1)
    expect(result.stderr).toMatch(/^keys: configuration error: DATABASE_URL: must be a PostgreSQL URL [^\n]+\n$/)
  })

  it(
    "says what it is connecting to while the database does not answer, then why it gave up: exit 1, one line",
    async () => {
      const port = (silent.address() as { port: number }).port
      const result = await runKeysCli(["list"], { DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/keys` })
      expect(result.code).toBe(1)
      expect(result.stderr).toBe(
        `keys: connecting to DATABASE_URL (PostgreSQL 127.0.0.1:${port}/keys)…\n` +
          `keys: database error: cannot connect to DATABASE_URL (PostgreSQL 127.0.0.1:${port}/keys): ` +
          "Connection timed out\n"
      )
    },
    30_000
  )
})
