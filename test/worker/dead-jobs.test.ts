import { Effect, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { startTestServer, type TestServer } from "../support/server.ts"

const MAX_ATTEMPTS = 3

let server: TestServer
beforeAll(async () => {
  server = await startTestServer({ env: { JOBS_MAX_ATTEMPTS: String(MAX_ATTEMPTS) }, captureLogs: true })
})
afterAll(() => server?.close())

const JobState = Schema.Struct({ attempts: Schema.Number, dead: Schema.Boolean, done: Schema.Boolean })

const query = <A>(f: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) =>
  server.run(Effect.flatMap(SqlClient.SqlClient, f))

const enqueue = (payload: unknown) =>
  query((sql) =>
    Effect.map(
      sql<{ id: string }>`INSERT INTO jobs (kind, payload, run_at)
                          VALUES ('TransferProgress', ${
        JSON.stringify(payload)
      }::jsonb, now()) RETURNING id::text AS id`,
      ([row]) => row!.id
    )
  )

const stateOf = (id: string) =>
  query((sql) =>
    Effect.flatMap(
      sql`SELECT attempts, dead_at IS NOT NULL AS dead, done_at IS NOT NULL AS done FROM jobs WHERE id = ${id}`,
      ([row]) => Schema.decodeUnknownEffect(JobState)(row)
    )
  )

describe("a job that keeps failing", () => {
  it(`goes dead after ${MAX_ATTEMPTS} attempts, with one warning, and is not tried again`, async () => {
    // a known kind whose payload this version cannot read: every attempt fails
    const poison = await enqueue({ _tag: "TransferProgress", transferId: 42 })
    for (let attempt = 1; attempt < MAX_ATTEMPTS; attempt++) {
      await vi.waitFor(async () => expect((await stateOf(poison)).attempts).toBe(attempt), {
        timeout: 10_000,
        interval: 20
      })
      // pretend the retry delay passed instead of waiting for it
      await query((sql) => sql`UPDATE jobs SET run_at = now() WHERE id = ${poison} AND dead_at IS NULL`)
    }
    await vi.waitFor(async () => expect((await stateOf(poison)).dead).toBe(true), { timeout: 10_000, interval: 20 })
    expect(await stateOf(poison)).toEqual({ attempts: MAX_ATTEMPTS, dead: true, done: false })

    // a job queued after it runs, and the dead one is left alone
    await query((sql) => sql`UPDATE jobs SET run_at = now() WHERE id = ${poison}`)
    const witness = await enqueue({
      _tag: "TransferProgress",
      transferId: "tr_nobody",
      status: "completed",
      fundsArrived: true
    })
    await vi.waitFor(async () => expect((await stateOf(witness)).done).toBe(true), { timeout: 10_000, interval: 20 })
    expect(await stateOf(poison)).toEqual({ attempts: MAX_ATTEMPTS, dead: true, done: false })

    const deadLines = server.logs.filter((line) => line.includes(`job ${poison} `))
    expect(deadLines).toHaveLength(1)
    expect(JSON.parse(deadLines[0]!)).toMatchObject({ logLevel: "WARN" })
    expect(deadLines[0]).not.toContain("\\n    at ")
  })
})
