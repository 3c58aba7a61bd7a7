/**
 * The service behind Debian's PgBouncer in transaction pooling mode, as managed PostgreSQL offerings put it in front:
 * the keys CLI migrates the database and issues keys through it; started as `npm start` runs it with DATABASE_URL
 * through PgBouncer (DATABASE_POOLER=transaction), the service carries a payout from create to the delivered `payout.completed` webhook, and passes the conformance kit. Work
 * notifications (LISTEN) go over DATABASE_DIRECT_URL: with the idle poll set to ten minutes, the webhook only goes
 * out because a notification woke the delivery loop. Without DATABASE_DIRECT_URL the service says at start-up that it
 * polls, and still completes a payout.
 */
import { spawn } from "node:child_process"
import { once } from "node:events"
import { randomUUID } from "node:crypto"
import { join } from "node:path"
import { Webhook } from "standardwebhooks"
import { Effect, Fiber, Layer, ManagedRuntime, Option, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  API,
  approvedCustomer,
  json,
  payoutBody,
  root,
  type Service,
  startService,
  stopService,
  txHash
} from "../../scripts/bench/service.ts"
import { makeSqlLayer } from "../../src/db/Database.ts"
import { acquireTestDatabase, type TestDatabase } from "../support/database.ts"
import { type Pgbouncer, pgbouncerBinary, startPgbouncer, warnIfNoPgbouncer } from "../support/pgbouncer.ts"
import { runKeysCli } from "../support/process.ts"
import { type Receiver, startReceiver } from "../support/webhookReceiver.ts"

warnIfNoPgbouncer("test/process/pgbouncer.test.ts")

const call = async (service: Service, method: string, path: string, body?: unknown, headers = {}) => {
  const response = await fetch(`${service.baseUrl}${path}`, {
    method,
    headers: { ...service.auth, ...json, ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const text = await response.text()
  return { status: response.status, text, json: JSON.parse(text) as Record<string, unknown> }
}

/** Polls GET /payouts/{id} until it is `status` (bounded). */
const payoutReaches = async (service: Service, payoutId: string, status: string) => {
  const deadline = Date.now() + 30_000
  for (;;) {
    const payout = await call(service, "GET", `${API}/payouts/${payoutId}`)
    expect(payout.status, payout.text).toBe(200)
    if (payout.json["status"] === status) return payout.json
    if (Date.now() > deadline) throw new Error(`payout ${payoutId} is still ${String(payout.json["status"])}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/** Creates a payout for a new KYC-approved user and confirms it with a fresh transaction hash. */
const confirmedPayout = async (service: Service, n: number) => {
  const user = await approvedCustomer(service)
  const created = await call(service, "POST", `${API}/payouts`, JSON.parse(payoutBody(user)), {
    "idempotency-key": randomUUID()
  })
  expect(created.status, created.text).toBe(201)
  const payoutId = created.json["payoutId"] as string
  const confirmed = await call(service, "POST", `${API}/payouts/${payoutId}/confirm`, { txHash: txHash(n) })
  expect(confirmed.status, confirmed.text).toBe(200)
  return payoutId
}

/** The kit's CLI against `baseUrl`: its exit code, its JSON report (stdout) and its console lines (stderr). */
const runKit = (baseUrl: string, key: string, secondKey: string) =>
  new Promise<{ code: number | null; report: string; console: string }>((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        join("testkit", "src", "cli.ts"),
        "--base-url",
        baseUrl,
        "--reporter",
        "console",
        "--reporter",
        "json"
      ],
      { cwd: root, env: { ...process.env, CONFORMANCE_API_KEY: key, CONFORMANCE_SECOND_API_KEY: secondKey } }
    )
    let report = ""
    let console = ""
    child.stdout.on("data", (chunk: Buffer) => (report += chunk.toString("utf8")))
    child.stderr.on("data", (chunk: Buffer) => (console += chunk.toString("utf8")))
    child.once("error", reject)
    void once(child, "exit").then(([code]) => resolve({ code: code as number | null, report, console }))
  })

describe.skipIf(pgbouncerBinary === undefined)("behind PgBouncer in transaction mode", () => {
  let database: TestDatabase
  let bouncer: Pgbouncer
  let receiver: Receiver
  let keys: { readonly first: string; readonly second: string }
  const services: Array<Service> = []
  /** The keys CLI through PgBouncer (the first run migrates the database through it). */
  const issueKey = async (integration: string) => {
    const issued = await runKeysCli(["issue", "--create", integration], {
      DATABASE_URL: bouncer.url,
      DATABASE_POOLER: "transaction"
    })
    const key = /(cop_test_pk_[0-9A-Za-z]+)/.exec(issued.stdout)?.[1]
    if (key === undefined) throw new Error(`keys issue failed:\n${issued.stdout}${issued.stderr}`)
    return key
  }
  const behindPgbouncer = async (env: Record<string, string>): Promise<Service> => {
    const service = await startService({
      DATABASE_URL: bouncer.url,
      DATABASE_POOLER: "transaction",
      MOCK_LIFECYCLE_DELAY_MS: "300",
      LOG_LEVEL: "info",
      ...env
    }, false).catch((error: unknown) => {
      throw new Error(`${String(error)}\npgbouncer:\n${bouncer.output()}`)
    })
    services.push(service)
    return { ...service, key: keys.first, auth: { authorization: `Bearer ${keys.first}` } }
  }

  beforeAll(async () => {
    database = await acquireTestDatabase()
    bouncer = await startPgbouncer(database.url)
    receiver = await startReceiver()
    keys = { first: await issueKey("partner-a"), second: await issueKey("partner-b") }
  }, 60_000)
  afterAll(async () => {
    for (const service of services) await stopService(service.child)
    await receiver?.close()
    await bouncer?.stop()
    await database?.release()
  })

  describe("with DATABASE_DIRECT_URL", () => {
    let service: Service
    beforeAll(async () => {
      // Ten minutes between idle polls: new work is only started promptly when a notification arrives.
      service = await behindPgbouncer({ DATABASE_DIRECT_URL: database.url, JOBS_IDLE_INTERVAL_MS: "600000" })
    }, 90_000)

    it("says at start-up that LISTEN goes over the direct URL", () => {
      expect(service.output()).toContain(
        "database: behind a pooler in transaction mode: prepared statements off, timeouts set per transaction, LISTEN over DATABASE_DIRECT_URL"
      )
      expect(service.output()).not.toContain("without DATABASE_DIRECT_URL")
    })

    it(
      "carries a payout from create through confirm and the provider to completed, and delivers the signed payout.completed webhook",
      async () => {
        const endpoint = await call(service, "POST", "/api/integrations/webhook-endpoints", { url: receiver.url })
        expect(endpoint.status, endpoint.text).toBe(201)
        const payoutId = await confirmedPayout(service, 1)
        const completed = await payoutReaches(service, payoutId, "completed")
        expect(completed["payoutId"]).toBe(payoutId)
        const delivery = await receiver.next(
          (d) => d.event.type === "payout.completed" && d.event.data.object["payoutId"] === payoutId,
          30_000
        )
        const secret = endpoint.json["secret"] as string
        expect(() =>
          new Webhook(secret).verify(delivery.body, {
            "webhook-id": delivery.id,
            "webhook-timestamp": delivery.timestamp,
            "webhook-signature": delivery.signature
          })
        ).not.toThrow()
      },
      60_000
    )

    it("passes the conformance kit", async () => {
      const kit = await runKit(service.baseUrl, keys.first, keys.second)
      expect(kit.code, kit.console).toBe(0)
      const report = JSON.parse(kit.report) as {
        readonly verdict: string
        readonly fullConformanceClaim: boolean
        readonly summary: { readonly passed: number; readonly failed: number }
      }
      expect(report.verdict, kit.console).toBe("conformant")
      expect(report.fullConformanceClaim).toBe(true)
      expect(report.summary.failed).toBe(0)
      expect(report.summary.passed).toBeGreaterThan(0)
    }, 300_000)
  })

  describe("the SQL layer through PgBouncer (DATABASE_POOLER=transaction)", () => {
    let pooled: ManagedRuntime.ManagedRuntime<SqlClient.SqlClient, never>
    let direct: ManagedRuntime.ManagedRuntime<SqlClient.SqlClient, never>
    beforeAll(() => {
      pooled = ManagedRuntime.make(
        makeSqlLayer({
          url: Option.some(Redacted.make(bouncer.url)),
          embeddedDataDir: "unused",
          pooler: "transaction"
        }).pipe(Layer.orDie)
      )
      direct = ManagedRuntime.make(database.layer)
    })
    afterAll(async () => {
      await pooled?.dispose()
      await direct?.dispose()
    })

    it("opens every transaction with the statement, lock and idle-in-transaction timeouts the startup packet cannot carry", async () => {
      const settings = await pooled.runPromise(
        Effect.flatMap(
          SqlClient.SqlClient,
          (sql) =>
            sql`SELECT current_setting('statement_timeout') AS statement, current_setting('lock_timeout') AS lock,
                   current_setting('idle_in_transaction_session_timeout') AS idle`.pipe(sql.withTransaction)
        )
      )
      expect(settings).toEqual([{ statement: "15s", lock: "5s", idle: "30s" }])
    })

    it("cancels an interrupted statement on the server, through PgBouncer", async () => {
      const probe = `cancel_probe_${randomUUID().replaceAll("-", "")}`
      const running = Effect.flatMap(
        SqlClient.SqlClient,
        (sql) =>
          sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE state = 'active' AND query LIKE ${`%${probe}%`} AND pid <> pg_backend_pid()`
      ).pipe(
        Effect.map(([row]) => row?.n ?? 0)
      )
      const until = async (what: string, condition: (n: number) => boolean) => {
        const deadline = Date.now() + 10_000
        while (!condition(await direct.runPromise(running))) {
          if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`)
          await new Promise((resolve) => setTimeout(resolve, 20))
        }
      }
      const sleeping = pooled.runFork(
        Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`SELECT pg_sleep(60) AS ${probe}`))
      )
      await until("the statement runs", (n) => n === 1)
      await Effect.runPromise(Fiber.interrupt(sleeping))
      await until("the server no longer runs it", (n) => n === 0)
      // and PgBouncer lived through it (1.18 exits when a cancel's client closes before the cancel is handled)
      const after = await pooled.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT 1 AS one`))
      expect(after).toEqual([{ one: 1 }])
      expect(bouncer.output()).not.toContain("FATAL")
    }, 30_000)
  })

  describe("without DATABASE_DIRECT_URL", () => {
    it("says once at start-up that it polls instead of listening, and still completes a payout", async () => {
      const service = await behindPgbouncer({ JOBS_IDLE_INTERVAL_MS: "200" })
      const warnings = service.output().split("\n").filter((line) => line.includes("without DATABASE_DIRECT_URL"))
      expect(warnings).toHaveLength(1)
      expect(warnings[0]).toContain(
        "LISTEN work_available: behind a pooler in transaction mode without DATABASE_DIRECT_URL"
      )
      const payoutId = await confirmedPayout(service, 2)
      await payoutReaches(service, payoutId, "completed")
    }, 90_000)
  })
})
