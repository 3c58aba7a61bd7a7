/**
 * `keys rotate` and the new key's expiry: without `--expires` the new key keeps the old key's expiry, and the CLI
 * says so; `--expires` gives it another (a duration, a timestamp, or `never`). Run as an operator runs it, against
 * DATABASE_URL.
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

const listed = async () => {
  const result = await keys("list", "--json")
  expect(result.code, result.stderr).toBe(0)
  return JSON.parse(result.stdout) as Array<{ id: string; last4: string; expiresAt: string | null }>
}

const rowOf = async (key: string) => (await listed()).find((row) => row.last4 === key.slice(-4))!

const lastLine = (text: string) => text.trim().split("\n").at(-1)?.trim() ?? ""

const DAY_MS = 86_400_000

describe("keys rotate", () => {
  it("says that the new key keeps the old key's expiry, and takes --expires for another (or never)", async () => {
    const issued = await keys("issue", "rotating", "--create", "--expires", "30d")
    expect(issued.code, issued.stderr).toBe(0)
    const first = await rowOf(lastLine(issued.stdout))

    const kept = await keys("rotate", first.id)
    expect(kept.code, kept.stderr).toBe(0)
    const second = await rowOf(lastLine(kept.stdout))
    expect(second.expiresAt).toBe(first.expiresAt)
    expect(kept.stdout).toContain(
      `new key id ${second.id}, valid until ${first.expiresAt} (as the old key; --expires sets another)`
    )

    const longer = await keys("rotate", second.id, "--expires", "90d")
    expect(longer.code, longer.stderr).toBe(0)
    const third = await rowOf(lastLine(longer.stdout))
    expect(Math.abs(Date.parse(third.expiresAt!) - Date.now() - 90 * DAY_MS)).toBeLessThan(60_000)
    expect(longer.stdout).toContain(`new key id ${third.id}, valid until ${third.expiresAt};`)

    const unbounded = await keys("rotate", third.id, "--expires", "never")
    expect(unbounded.code, unbounded.stderr).toBe(0)
    const fourth = await rowOf(lastLine(unbounded.stdout))
    expect(fourth.expiresAt).toBeNull()
    expect(unbounded.stdout).toContain(`new key id ${fourth.id}, no expiry;`)

    const refused = await keys("rotate", fourth.id, "--expires", "yesterday")
    expect(refused.code).toBe(2)
    expect(refused.stderr).toContain(
      `--expires: a duration (30d, 12h, 90m), a future ISO timestamp or never, not "yesterday"`
    )
  }, 120_000)
})
