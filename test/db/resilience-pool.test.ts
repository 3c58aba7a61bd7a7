/**
 * src/db/PgPool.ts on its own: a connection that stops answering is dropped from the pool, never handed
 * out again. (The HTTP-level consequences are in resilience-stall.test.ts.)
 */
import { once } from "node:events"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import type { Pool, PoolClient } from "pg"
import { makePool, type PoolSettings } from "../../src/db/PgPool.ts"
import { acquireTestDatabase, type TestDatabase } from "../support/database.ts"
import { startTcpProxy, targetOf, type TcpProxy } from "../support/tcpProxy.ts"

let database: TestDatabase
let proxy: TcpProxy
const pools: Array<Pool> = []

beforeAll(async () => {
  database = await acquireTestDatabase()
  proxy = await startTcpProxy(targetOf(database.url))
})
afterEach(async () => {
  proxy.setMode("pass")
  await Promise.all(pools.splice(0).map((pool) => pool.end()))
})
afterAll(async () => {
  await proxy?.close()
  await database?.release()
})

const settings = (overrides: Partial<PoolSettings>): PoolSettings => ({
  url: proxy.urlFor(database.url),
  size: 2,
  applicationName: "pool-test",
  connectTimeoutMs: 2_000,
  statementTimeoutMs: 2_000,
  lockTimeoutMs: 1_000,
  idleInTransactionTimeoutMs: 5_000,
  queryTimeoutMs: 30_000,
  keepAliveDelayMs: 1_000,
  prepare: true,
  ...overrides
})

const poolWith = (overrides: Partial<PoolSettings>) => {
  const pool = makePool(settings(overrides))
  pools.push(pool)
  return pool
}

const query = (client: PoolClient, text: string) =>
  new Promise<unknown>((resolve) => client.query(text, [], (error: unknown) => resolve(error ?? undefined)))

/** Resolves when the pool has dropped a client; fails after `ms`. */
const removed = (pool: Pool, ms: number) =>
  once(pool, "remove", { signal: AbortSignal.timeout(ms) }).then(() => pool.totalCount)

describe("the pool under a stalled connection", () => {
  it("fails a query that gets no answer within query_timeout, and drops its connection", async () => {
    const pool = poolWith({ queryTimeoutMs: 500 })
    const client = await pool.connect()
    expect(await query(client, "SELECT 1")).toBeUndefined()

    proxy.setMode("stall")
    const dropped = removed(pool, 5_000)
    const error = await query(client, "SELECT 1")
    client.release()

    expect(error).toBeInstanceOf(Error)
    expect((error as Error).message).toBe("Query read timeout")
    expect(await dropped).toBe(0)
  })

  it("drops a client released while its query is still unanswered (an interrupted request)", async () => {
    const pool = poolWith({ queryTimeoutMs: 60_000 })
    const client = await pool.connect()
    expect(await query(client, "SELECT 1")).toBeUndefined()

    proxy.setMode("stall")
    const dropped = removed(pool, 5_000)
    const unanswered = query(client, "SELECT 1")
    client.release()

    expect(await dropped).toBe(0)
    expect(await unanswered).toBeInstanceOf(Error)
  })

  it("keeps a healthy client for the next checkout", async () => {
    const pool = poolWith({})
    const client = await pool.connect()
    expect(await query(client, "SELECT 1")).toBeUndefined()
    client.release()
    expect(pool.totalCount).toBe(1)
    const again = await pool.connect()
    expect(again).toBe(client)
    again.release()
  })
})
