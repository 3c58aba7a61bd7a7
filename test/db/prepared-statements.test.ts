/**
 * Statements with parameters are prepared once per connection (src/db/PgPool.ts): the server keeps one named statement
 * for a text however often it runs; with `prepare: false` (behind a transaction pooler) none, and a statement without
 * parameters is never named.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import type { PoolClient } from "pg"
import { makePool, type PoolSettings } from "../../src/db/PgPool.ts"
import { acquireTestDatabase, type TestDatabase } from "../support/database.ts"

let database: TestDatabase
beforeAll(async () => {
  database = await acquireTestDatabase()
})
afterAll(async () => {
  await database?.release()
})

const settings = (prepare: boolean): PoolSettings => ({
  url: database.url,
  size: 1,
  applicationName: "prepared-test",
  connectTimeoutMs: 5_000,
  statementTimeoutMs: 5_000,
  lockTimeoutMs: 1_000,
  idleInTransactionTimeoutMs: 5_000,
  queryTimeoutMs: 30_000,
  keepAliveDelayMs: 1_000,
  prepare
})

/** The service's own call shape: text, values, callback. */
const query = (client: PoolClient, text: string, values: Array<unknown>) =>
  new Promise<Array<Record<string, unknown>>>((resolve, reject) =>
    client.query(
      text,
      values,
      (error: Error | null, result: { rows: Array<Record<string, unknown>> }) =>
        error ? reject(error) : resolve(result.rows)
    )
  )

/** Named statements this connection's session holds for `text`. */
const preparedFor = async (client: PoolClient, text: string) => {
  const [row] = await query(client, "SELECT count(*)::int AS n FROM pg_prepared_statements WHERE statement = $1", [
    text
  ])
  return row?.["n"]
}

describe("prepared statements", () => {
  const withValues = "SELECT $1::int + 1 AS n"
  const withoutValues = "SELECT 41 + 1 AS n"

  it("prepares a statement with parameters once per connection, and runs it by name after", async () => {
    const pool = makePool(settings(true))
    const client = await pool.connect()
    try {
      for (const value of [1, 2, 3]) expect(await query(client, withValues, [value])).toEqual([{ n: value + 1 }])
      expect(await query(client, withoutValues, [])).toEqual([{ n: 42 }])
      expect(await preparedFor(client, withValues)).toBe(1)
      expect(await preparedFor(client, withoutValues)).toBe(0)
    } finally {
      client.release()
      await pool.end()
    }
  })

  it("names nothing with prepare: false", async () => {
    const pool = makePool(settings(false))
    const client = await pool.connect()
    try {
      expect(await query(client, withValues, [1])).toEqual([{ n: 2 }])
      expect(await preparedFor(client, withValues)).toBe(0)
    } finally {
      client.release()
      await pool.end()
    }
  })
})
