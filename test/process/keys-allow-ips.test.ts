/**
 * `keys allow-ips` and `keys issue --allow-ips`, run as an operator runs them against DATABASE_URL: the CIDRs are
 * stored as written back (`network/prefix`), shown by `list`, and `any` lifts the list; a list that is not CIDRs, or
 * the option on another command, is a usage error (exit 2) before any database.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { acquireTestDatabase, type TestDatabase } from "../support/database.ts"
import { runKeysCli } from "../support/process.ts"

let database: TestDatabase
beforeAll(async () => {
  database = await acquireTestDatabase()
})
afterAll(() => database?.release())

const keys = (...args: Array<string>) => runKeysCli([...args], { DATABASE_URL: database.url, APP_MODE: "mock" })
/** A database nobody listens at: a usage error must be found before it is tried. */
const offline = (...args: Array<string>) =>
  runKeysCli([...args], { DATABASE_URL: "postgres://postgres@127.0.0.1:9/keys", APP_MODE: "mock" })

const lastLine = (text: string) => text.trim().split("\n").at(-1)?.trim() ?? ""

const allowedOf = async (key: string) => {
  const result = await keys("list", "--json")
  expect(result.code, result.stderr).toBe(0)
  const rows = JSON.parse(result.stdout) as Array<{ id: string; last4: string; allowedIps: Array<string> | null }>
  return rows.find((row) => row.last4 === key.slice(-4))!
}

describe("keys allow-ips", () => {
  it("issues a key with an allowlist, changes it, and lifts it with any", async () => {
    const issued = await keys("issue", "allowlisted", "--create", "--allow-ips", "203.0.113.0/24, 2001:DB8::1")
    expect(issued.code, issued.stderr).toBe(0)
    expect(issued.stdout).toContain(", accepted only from 203.0.113.0/24,2001:db8::1/128; shown once:")
    const key = lastLine(issued.stdout)
    const row = await allowedOf(key)
    expect(row.allowedIps).toEqual(["203.0.113.0/24", "2001:db8::1/128"])

    const changed = await keys("allow-ips", row.id, "198.51.100.7")
    expect(changed.code, changed.stderr).toBe(0)
    expect(changed.stdout.trim()).toBe(`key ${row.id} is accepted from 198.51.100.7/32`)
    expect((await allowedOf(key)).allowedIps).toEqual(["198.51.100.7/32"])

    const lifted = await keys("allow-ips", row.id, "any")
    expect(lifted.stdout.trim()).toBe(`key ${row.id} is accepted from any address`)
    expect((await allowedOf(key)).allowedIps).toBeNull()

    const unknown = await keys("allow-ips", "key_nonesuch", "any")
    expect(unknown.code).toBe(2)
    expect(unknown.stderr.trim()).toBe("no active key key_nonesuch")
  }, 120_000)

  it("a list that is not CIDRs, or --allow-ips elsewhere, is a usage error before any database", async () => {
    const [bad, badOption, elsewhere, missing] = await Promise.all([
      offline("allow-ips", "key_1", "10.0.0.0/33"),
      offline("issue", "acme", "--allow-ips", "example.com"),
      offline("rotate", "key_1", "--allow-ips", "10.0.0.0/8"),
      offline("allow-ips", "key_1")
    ])
    expect(bad.code).toBe(2)
    expect(bad.stderr.trim()).toBe(
      `allowed addresses: comma-separated CIDRs (203.0.113.0/24, 2001:db8::/48, 198.51.100.7) or any, not "10.0.0.0/33"`
    )
    expect(badOption.code).toBe(2)
    expect(badOption.stderr.startsWith("--allow-ips: allowed addresses:")).toBe(true)
    expect(elsewhere.code).toBe(2)
    expect(elsewhere.stderr.startsWith("--allow-ips: only with issue")).toBe(true)
    expect(missing.code).toBe(2)
    expect(missing.stderr.startsWith("usage: keys issue")).toBe(true)
  }, 60_000)
})
