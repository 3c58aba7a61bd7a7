/**
 * A database that refuses new connections while the server itself is up (`ALTER DATABASE ... ALLOW_CONNECTIONS
 * false`, the pool's backends terminated so every request needs a new connection): PostgreSQL answers each
 * connection attempt with SQLSTATE 55000 ("database ... is not currently accepting connections"). Every request
 * that needs the database gets a 503 ErrorBody with Retry-After (never a 500), each logs one short line (never a
 * stack trace), and the service recovers without a restart once connections are allowed again.
 */
import { Client } from "pg"
import { describe, expect, vi } from "vitest"
import { httpTest } from "../support/fixture.ts"
import { BREB, countPayouts, expectError, PAYOUTS, payoutBody } from "../support/flows.ts"
import type { TestServer } from "../support/server.ts"

const it = httpTest({ captureLogs: true })

const databaseName = (server: TestServer) => new URL(server.database.url).pathname.slice(1)

/** Runs `statements` on a connection to the server's `postgres` database (the test database may refuse it). */
const asAdmin = async (server: TestServer, statements: ReadonlyArray<readonly [string, ReadonlyArray<unknown>]>) => {
  const url = new URL(server.database.url)
  url.pathname = "/postgres"
  const client = new Client({ connectionString: url.toString() })
  await client.connect()
  try {
    for (const [text, values] of statements) await client.query(text, [...values])
  } finally {
    await client.end()
  }
}

const allowConnections = (server: TestServer, allow: boolean) =>
  asAdmin(server, [[`ALTER DATABASE "${databaseName(server)}" ALLOW_CONNECTIONS ${allow}`, []]])

const refuseConnections = (server: TestServer) =>
  asAdmin(server, [
    [`ALTER DATABASE "${databaseName(server)}" ALLOW_CONNECTIONS false`, []],
    ["SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()", [
      databaseName(server)
    ]]
  ])

// Connections allowed again before the fixture closes the server (and drops its database), if the test stopped early.
it.afterAll(({ server }) => allowConnections(server, true))

interface LogLine {
  readonly message: string | ReadonlyArray<string>
  readonly logLevel: string
  readonly cause?: string
  readonly annotations?: Record<string, unknown>
}

const KNOWN_REASONS = [
  "database unavailable: 55000 database <db> is not currently accepting connections",
  "database unavailable: Connection terminated unexpectedly",
  // The same terminated backend, when the socket reports the reset before pg reads the end of stream.
  "database unavailable: ECONNRESET read ECONNRESET",
  // Or when PostgreSQL's FATAL notice for the terminated backend reaches pg before the socket closes.
  "database unavailable: 57P01 terminating connection due to administrator command"
]

const parse = (line: string) => JSON.parse(line) as LogLine
const text = (line: LogLine) => (Array.isArray(line.message) ? line.message.join(" ") : String(line.message))

describe("the database refuses connections (SQLSTATE 55000)", () => {
  it("answers every request 503 ErrorBody with Retry-After, logs one line each without a stack, and recovers", async ({ server, partner, user }) => {
    const existing = await partner.payout(user)
    const from = server.logs.length
    await refuseConnections(server)

    const requests = [
      ...Array.from({ length: 15 }, () => () => partner.get(PAYOUTS)),
      ...Array.from({ length: 15 }, () => () => partner.getPayout(existing.payoutId)),
      ...Array.from({ length: 10 }, () => () => partner.get(`${BREB}/quote`)),
      ...Array.from(
        { length: 17 },
        (_, i) => () =>
          partner.createPayout(payoutBody(user), { "idempotency-key": `refused-${i}-${crypto.randomUUID()}` })
      )
    ]
    const answers = []
    for (const send of requests) answers.push(await send())

    const statuses = answers.map((answer) => answer.status)
    const fiveHundreds = statuses.filter((status) => status === 500).length
    expect({ fiveHundreds, of: answers.length }).toEqual({ fiveHundreds: 0, of: 57 })
    for (const answer of answers) {
      expect(expectError(answer, 503)).toBe("the database is unavailable; retry shortly")
      expect(answer.headers.get("retry-after")).toMatch(/^[1-9][0-9]*$/)
    }
    expectError(await partner.get("/readyz"), 503)
    expect((await partner.get("/healthz")).status).toBe(200)

    const lines = server.logs.slice(from).map(parse)
    expect(lines.filter((line) => line.logLevel === "ERROR").map(text)).toEqual([])
    for (const line of lines) {
      expect(line.cause ?? "", text(line)).not.toMatch(/\n\s+at /)
      expect(text(line)).not.toContain("\n")
    }
    const unavailable = lines.filter((line) =>
      line.logLevel === "WARN" && text(line).startsWith("database unavailable")
    )
    expect(unavailable.length).toBeGreaterThan(0)
    expect(unavailable.length).toBeLessThanOrEqual(answers.length)
    for (const line of unavailable) expect(text(line).length).toBeLessThan(300)
    // A request may still meet a pooled connection whose backend was just terminated; the rest are refused.
    const reasons = unavailable.map((line) => text(line).replace(/"t_[0-9a-f]+"/, "<db>"))
    expect(reasons.filter((reason) => !KNOWN_REASONS.includes(reason))).toEqual([])
    expect(reasons.filter((reason) => reason.includes("55000")).length).toBeGreaterThan(answers.length / 2)

    await allowConnections(server, true)
    await vi.waitFor(async () => expect((await partner.get(PAYOUTS)).status).toBe(200), {
      timeout: 20_000,
      interval: 50
    })
    expect((await partner.get("/readyz")).status).toBe(200)
    expect(await countPayouts(server, partner.integrationId)).toBe(1)
  })
})
