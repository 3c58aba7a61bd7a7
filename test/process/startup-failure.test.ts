/**
 * The start-up failure line for causes a test cannot produce on loopback alone: a host name that does not resolve
 * (resolving one would leave the machine), a refused login, a missing database. The error objects are the shapes
 * node and PostgreSQL give (a `code` on the cause); the line must name DATABASE_URL and the reason, no stack.
 */
import { Cause, Option } from "effect"
import { SqlError, UnknownError } from "effect/sql/SqlError"
import { describe, expect, it } from "vitest"
import { startupFailureLine } from "../../src/base/StartupFailure.ts"

const connectFailure = (code: string, message: string) =>
  Cause.fail(
    new SqlError({
      reason: new UnknownError({
        cause: Object.assign(new Error(message), { code }),
        message: "PgClient: Failed to connect"
      })
    })
  )

const target = "DATABASE_URL (PostgreSQL base:5432/payouts)"

describe("a database that cannot be reached at start-up", () => {
  it.each([
    ["ENOTFOUND", "getaddrinfo ENOTFOUND base", "no such host (ENOTFOUND)"],
    ["28P01", "password authentication failed for user \"partner\"", "password authentication failed (28P01)"],
    ["3D000", "database \"payouts\" does not exist", "the database does not exist (3D000)"],
    ["XX999", "something new\n    at Socket.<anonymous>", "something new"]
  ])("%s is one line naming DATABASE_URL and the reason", (code, message, reason) => {
    expect(Option.getOrThrow(startupFailureLine(connectFailure(code, message), target))).toBe(
      `database error: cannot connect to ${target}: ${reason}`
    )
  })
})
