/**
 * The 30 s rate is kept in the replica's memory until the shared row's own expiry: a fresh rate costs no round trip
 * (shown by deleting the row: the replica still answers from memory), and past the TTL the replica asks again.
 */
import { SqlClient } from "effect/sql"
import { Effect } from "effect"
import { describe, expect, vi } from "vitest"
import { httpTest } from "../support/fixture.ts"
import type { Partner } from "../support/flows.ts"
import type { TestServer } from "../support/server.ts"

const it = httpTest({ env: { RATE_CACHE_TTL_SECONDS: "1" } })

const quote = async (partner: Partner) => {
  const wire = await partner.get("/api/integrations/breb/quote", {})
  expect(wire.status, wire.text).toBe(200)
  return wire.json as { cached: boolean; sellRateUsdCop: string }
}

const rowCount = (server: TestServer) =>
  server.run(
    Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ n: number }>`SELECT count(*)::int AS n FROM rate_cache`)
  )

describe("rate in process memory", () => {
  it("serves a fresh rate without reading the shared row, and refreshes after the TTL", async ({ server, partner }) => {
    // a fresh fetch (cached: false) is stored in the row and remembered
    await vi.waitFor(async () => expect((await quote(partner)).cached).toBe(false), { timeout: 5_000, interval: 50 })
    await server.run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql`DELETE FROM rate_cache`))
    // within the TTL: answered from memory (the row is gone, so it cannot have come from the database)
    const remembered = await quote(partner)
    expect(remembered.cached).toBe(true)
    expect(await rowCount(server)).toEqual([{ n: 0 }])
    // past the row's expiry the memory is dropped too: the provider is asked again and the row written again
    await vi.waitFor(async () => expect((await quote(partner)).cached).toBe(false), { timeout: 5_000, interval: 100 })
    expect(await rowCount(server)).toEqual([{ n: 1 }])
  })
})
