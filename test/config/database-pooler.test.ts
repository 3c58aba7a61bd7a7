/** DATABASE_POOLER and DATABASE_DIRECT_URL as the configuration reads them (the behaviour: test/process/pgbouncer.test.ts). */
import { ConfigProvider, Effect, Option, Redacted } from "effect"
import { describe, expect, it } from "vitest"
import { AppConfigShape } from "../../src/config/Config.ts"

const read = (env: Record<string, string>) =>
  Effect.runPromise(
    Effect.provideService(AppConfigShape, ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env }))
  )

const refusal = (env: Record<string, string>) => read(env).then(() => "read", (error: unknown) => String(error))

describe("database pooler settings", () => {
  it("default to no pooler, no direct URL, prepared statements left to the pooler setting", async () => {
    const config = await read({})
    expect(config.databasePooler).toBe("none")
    expect(Option.isNone(config.databaseDirectUrl)).toBe(true)
    expect(Option.isNone(config.databasePreparedStatements)).toBe(true)
  })

  it("read DATABASE_POOLER=transaction, a direct URL and an explicit DATABASE_PREPARED_STATEMENTS", async () => {
    const config = await read({
      DATABASE_POOLER: "transaction",
      DATABASE_DIRECT_URL: "postgres://app@db.internal:5432/payouts",
      DATABASE_PREPARED_STATEMENTS: "true"
    })
    expect(config.databasePooler).toBe("transaction")
    expect(Option.map(config.databaseDirectUrl, Redacted.value)).toEqual(
      Option.some("postgres://app@db.internal:5432/payouts")
    )
    expect(config.databasePreparedStatements).toEqual(Option.some(true))
  })

  it("refuse a pooler mode it does not know and a direct URL that is not PostgreSQL's", async () => {
    expect(await refusal({ DATABASE_POOLER: "session" })).toContain("DATABASE_POOLER")
    expect(await refusal({ DATABASE_DIRECT_URL: "db.internal:5432" })).toContain("must be a PostgreSQL URL")
  })
})
