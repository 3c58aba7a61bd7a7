/**
 * An interrupted statement is cancelled on the server on its own connection, and only there: the client keeps each
 * pooled connection's cancel with that connection (src/db/PgSqlClient.ts), so a statement running on another
 * connection of the same pool goes on.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, ManagedRuntime } from "effect"
import { SqlClient } from "effect/sql"
import { randomUUID } from "node:crypto"
import { acquireTestDatabase, type TestDatabase } from "../support/database.ts"

describe("cancelling an interrupted statement", () => {
  let database: TestDatabase
  let runtime: ManagedRuntime.ManagedRuntime<SqlClient.SqlClient, never>
  beforeAll(async () => {
    database = await acquireTestDatabase()
    runtime = ManagedRuntime.make(database.layer)
  })
  afterAll(async () => {
    await runtime?.dispose()
    await database?.release()
  })

  /** How many server connections are running a statement that names `probe`. */
  const running = (probe: string) =>
    runtime.runPromise(
      Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE state = 'active' AND query LIKE ${`%${probe}%`} AND pid <> pg_backend_pid()`.pipe(
          Effect.map(([row]) =>
            row?.n ?? 0
          )
        ))
    )
  const until = async (what: string, condition: () => Promise<boolean>) => {
    const deadline = Date.now() + 10_000
    while (!(await condition())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`)
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  }
  const sleep = (probe: string) =>
    runtime.runFork(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`SELECT pg_sleep(60) AS ${probe}`)))

  it("cancels the interrupted statement's own connection, not another one of the pool", async () => {
    const first = `first_${randomUUID().replaceAll("-", "")}`
    const second = `second_${randomUUID().replaceAll("-", "")}`
    // Each interrupted once, so each connection's cancel has been made before the one that matters.
    for (const warm of [first, second].map((probe) => `${probe}_warm`)) {
      const fiber = sleep(warm)
      await until(`${warm} runs`, async () => (await running(warm)) === 1)
      await Effect.runPromise(Fiber.interrupt(fiber))
      await until(`${warm} is cancelled`, async () => (await running(warm)) === 0)
    }
    const kept = sleep(first)
    await until("the first statement runs", async () => (await running(first)) === 1)
    const interrupted = sleep(second)
    await until("the second statement runs", async () => (await running(second)) === 1)

    await Effect.runPromise(Fiber.interrupt(interrupted))
    await until("the server no longer runs the second", async () => (await running(second)) === 0)

    expect(await running(first)).toBe(1)
    expect(kept.pollUnsafe()).toBeUndefined()
    await Effect.runPromise(Fiber.interrupt(kept))
    await until("the server no longer runs the first", async () => (await running(first)) === 0)
  }, 60_000)
})
