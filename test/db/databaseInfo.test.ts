import { describe, expect, it } from "@effect/vitest"
import { Option, Redacted } from "effect"
import { databaseInfo, describeDatabase, redactUrl } from "../../src/db/Database.ts"

describe("database info", () => {
  it("never prints the password", () => {
    const url = "postgres://app:s3cret@db.internal:5432/payouts?sslmode=require"
    expect(redactUrl(url)).toBe("postgres://app@db.internal:5432/payouts")
    const line = describeDatabase(databaseInfo({ url: Option.some(Redacted.make(url)), embeddedDataDir: ".data" }))
    expect(line).toBe("database: postgres at postgres://app@db.internal:5432/payouts")
    expect(line).not.toContain("s3cret")
    expect(redactUrl("not a url s3cret")).not.toContain("s3cret")
  })

  it("names the embedded backend and its data dir", () => {
    const info = databaseInfo({ url: Option.none(), embeddedDataDir: ".data/postgres" })
    expect(info).toEqual({ backend: "embedded", target: ".data/postgres" })
    expect(describeDatabase(info)).toBe("database: embedded PostgreSQL (data dir .data/postgres)")
  })
})
