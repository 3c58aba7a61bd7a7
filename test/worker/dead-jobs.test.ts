import { Effect, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { describe, expect, vi } from "vitest"
import { httpTest } from "../support/fixture.ts"
import type { TestServer } from "../support/server.ts"

const MAX_ATTEMPTS = 3

const it = httpTest({ env: { JOBS_MAX_ATTEMPTS: String(MAX_ATTEMPTS) }, captureLogs: true })

const JobState = Schema.Struct({ attempts: Schema.Number, dead: Schema.Boolean, done: Schema.Boolean })

const query = <A>(server: TestServer, f: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) =>
  server.run(Effect.flatMap(SqlClient.SqlClient, f))

const enqueue = (server: TestServer, payload: unknown) =>
  query(server, (sql) =>
    Effect.map(
      sql<{ id: string }>`INSERT INTO jobs (kind, payload, run_at)
                          VALUES ('TransferProgress', ${
        JSON.stringify(payload)
      }::jsonb, now()) RETURNING id::text AS id`,
      ([row]) => row!.id
    ))

const stateOf = (server: TestServer, id: string) =>
  query(server, (sql) =>
    Effect.flatMap(
      sql`SELECT attempts, dead_at IS NOT NULL AS dead, done_at IS NOT NULL AS done FROM jobs WHERE id = ${id}`,
      ([row]) => Schema.decodeUnknownEffect(JobState)(row)
    ))

describe("a job that keeps failing", () => {
  it(`goes dead after ${MAX_ATTEMPTS} attempts, with one warning, and is not tried again`, async ({ server }) => {
    // a known kind whose payload this version cannot read: every attempt fails
    const poison = await enqueue(server, { _tag: "TransferProgress", transferId: 42 })
    for (let attempt = 1; attempt < MAX_ATTEMPTS; attempt++) {
      await vi.waitFor(async () => expect((await stateOf(server, poison)).attempts).toBe(attempt), {
        timeout: 10_000,
        interval: 20
      })
      // pretend the retry delay passed instead of waiting for it
      await query(server, (sql) => sql`UPDATE jobs SET run_at = now() WHERE id = ${poison} AND dead_at IS NULL`)
    }
    await vi.waitFor(async () => expect((await stateOf(server, poison)).dead).toBe(true), {
      timeout: 10_000,
      interval: 20
    })
    expect(await stateOf(server, poison)).toEqual({ attempts: MAX_ATTEMPTS, dead: true, done: false })

    // a job queued after it runs, and the dead one is left alone
    await query(server, (sql) => sql`UPDATE jobs SET run_at = now() WHERE id = ${poison}`)
    const witness = await enqueue(server, {
      _tag: "TransferProgress",
      transferId: "tr_nobody",
      status: "completed",
      fundsArrived: true
    })
    await vi.waitFor(async () => expect((await stateOf(server, witness)).done).toBe(true), {
      timeout: 10_000,
      interval: 20
    })
    expect(await stateOf(server, poison)).toEqual({ attempts: MAX_ATTEMPTS, dead: true, done: false })

    const deadLines = server.logs.filter((line) => line.includes(`job ${poison} `))
    expect(deadLines).toHaveLength(1)
    expect(JSON.parse(deadLines[0]!)).toMatchObject({ logLevel: "WARN" })
    expect(deadLines[0]).not.toContain("\\n    at ")
  })
})
