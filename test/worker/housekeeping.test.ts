/**
 * Retention: the periodic clean-up deletes rows past their retention and keeps every row still needed;
 * and the database itself refuses a payout status outside the contract's list.
 */
import { randomUUID } from "node:crypto"
import { PayoutStatus } from "@cop-integrations/contracts"
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { AppConfig, AppConfigShape } from "../../src/config/Config.ts"
import { runMigrations } from "../../src/db/Migrations.ts"
import { HOUSEKEEPING_BATCH, makeHousekeeping } from "../../src/worker/Housekeeping.ts"
import { makeRetentionRepo } from "../../src/worker/RetentionRepo.ts"
import { TestDatabaseLive } from "../support/database.ts"
import { payoutRow } from "../support/payoutRow.ts"

const DAY = 24 * 60 * 60 * 1000
const RETENTION_DAYS = 30
const WEBHOOK_RETENTION_DAYS = 90
const REQUEST_LOG_RETENTION_DAYS = 7

const config = Layer.effect(
  AppConfig,
  Effect.provideService(
    AppConfigShape,
    ConfigProvider.ConfigProvider,
    ConfigProvider.fromEnv({
      env: {
        RETENTION_DAYS: String(RETENTION_DAYS),
        WEBHOOK_EVENT_RETENTION_DAYS: String(WEBHOOK_RETENTION_DAYS),
        REQUEST_LOG_RETENTION_DAYS: String(REQUEST_LOG_RETENTION_DAYS)
      }
    })
  )
).pipe(Layer.orDie)

const daysAgo = (days: number) => new Date(Date.now() - days * DAY)
const daysAhead = (days: number) => new Date(Date.now() + days * DAY)

const Ids = Schema.Array(Schema.Struct({ id: Schema.String }))

const seed = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const integration = `int_${randomUUID()}`
  yield* sql`INSERT INTO integrations (id, name) VALUES (${integration}, ${integration})`
  const quote = (id: string, createdAt: Date, expiresAt: Date) =>
    sql`INSERT INTO quotes (id, integration_id, from_token, sell_rate, mid_rate, created_at, expires_at)
        VALUES (${id}, ${integration}, 'USDC', '3960', '4000', ${createdAt}, ${expiresAt})`
  yield* quote("qt_expired_long_ago", daysAgo(RETENTION_DAYS + 2), daysAgo(RETENTION_DAYS + 1))
  yield* quote("qt_expired_recently", daysAgo(RETENTION_DAYS - 1), daysAgo(RETENTION_DAYS - 2))
  yield* quote("qt_old_but_valid", daysAgo(RETENTION_DAYS + 5), daysAhead(1))

  const otp = (id: string, createdAt: Date, expiresAt: Date) =>
    sql`INSERT INTO otp_challenges (id, integration_id, user_address, email, code_hash, created_at, expires_at)
        VALUES (${id}, ${integration}, '0xabc', 'ana@example.com', 'x', ${createdAt}, ${expiresAt})`
  yield* otp("otp_expired_long_ago", daysAgo(RETENTION_DAYS + 1), daysAgo(RETENTION_DAYS + 1))
  yield* otp("otp_recent", daysAgo(1), daysAgo(1))
  yield* otp("otp_old_but_valid", daysAgo(RETENTION_DAYS + 1), daysAhead(1))

  const job = (id: string, runAt: Date, doneAt: Date | null, deadAt: Date | null) =>
    sql`INSERT INTO jobs (id, kind, payload, run_at, done_at, dead_at)
        VALUES (${id}, 'TransferProgress', '{}'::jsonb, ${runAt}, ${doneAt}, ${deadAt})`
  yield* job("1", daysAgo(RETENTION_DAYS + 2), daysAgo(RETENTION_DAYS + 1), null) // done long ago
  yield* job("2", daysAgo(RETENTION_DAYS + 2), null, daysAgo(RETENTION_DAYS + 1)) // dead long ago
  yield* job("3", daysAgo(RETENTION_DAYS + 2), daysAgo(1), null) // done recently
  yield* job("4", daysAgo(RETENTION_DAYS + 2), null, null) // never finished

  const event = (id: string, receivedAt: Date) =>
    sql`INSERT INTO webhook_events (event_id, event_category, received_at) VALUES (${id}, 'transfer', ${receivedAt})`
  yield* event("wh_old", daysAgo(WEBHOOK_RETENTION_DAYS + 1))
  yield* event("wh_within", daysAgo(WEBHOOK_RETENTION_DAYS - 1))

  const key = `key_${randomUUID()}`
  yield* sql`INSERT INTO api_keys (id, integration_id, kind, key_hash, last4)
             VALUES (${key}, ${integration}, 'test', ${key}, 'abcd')`
  const session = (id: string, expiresAt: Date) =>
    sql`INSERT INTO dashboard_sessions (id, token_hash, integration_id, key_id, expires_at)
        VALUES (${id}, ${id}, ${integration}, ${key}, ${expiresAt})`
  yield* session("ds_expired_long_ago", daysAgo(RETENTION_DAYS + 1))
  yield* session("ds_expired_recently", daysAgo(1))
  yield* session("ds_open", daysAhead(0.5))
  const link = (hash: string, expiresAt: Date, sessionId: string | null) =>
    sql`INSERT INTO dashboard_sign_in_links (token_hash, integration_id, key_id, expires_at, session_id)
        VALUES (${hash}, ${integration}, ${key}, ${expiresAt}, ${sessionId})`
  yield* link("link_expired_long_ago", daysAgo(RETENTION_DAYS + 2), "ds_expired_long_ago")
  yield* link("link_expired_recently", daysAgo(RETENTION_DAYS - 1), "ds_expired_long_ago")
  yield* link("link_valid", daysAhead(0.001), null)
})

const remaining = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const ids = (rows: ReadonlyArray<unknown>) => Schema.decodeUnknownSync(Ids)(rows).map((row) => row.id).sort()
  return {
    quotes: ids(yield* sql`SELECT id FROM quotes`),
    otp: ids(yield* sql`SELECT id FROM otp_challenges`),
    jobs: ids(yield* sql`SELECT id::text AS id FROM jobs`),
    events: ids(yield* sql`SELECT event_id AS id FROM webhook_events`),
    dashboardSessions: ids(yield* sql`SELECT id FROM dashboard_sessions`),
    dashboardLinks: ids(
      yield* sql`SELECT token_hash || ' ' || coalesce(session_id, '-') AS id FROM dashboard_sign_in_links`
    )
  }
})

describe("housekeeping", () => {
  it.live("deletes rows past their retention and keeps every row still needed", () =>
    Effect.gen(function*() {
      yield* runMigrations
      yield* seed
      const housekeeping = yield* makeHousekeeping
      yield* housekeeping
      expect(yield* remaining).toEqual({
        quotes: ["qt_expired_recently", "qt_old_but_valid"],
        otp: ["otp_old_but_valid", "otp_recent"],
        jobs: ["3", "4"],
        events: ["wh_within"],
        dashboardSessions: ["ds_expired_recently", "ds_open"],
        // a link kept longer than the session it opened no longer names it
        dashboardLinks: ["link_expired_recently -", "link_valid -"]
      })
      // a second round finds nothing more
      const before = yield* remaining
      yield* housekeeping
      expect(yield* remaining).toEqual(before)
    }).pipe(Effect.provide(Layer.merge(TestDatabaseLive, config))), 60_000)

  it.live("deletes more rows than one batch in a round", () =>
    Effect.gen(function*() {
      yield* runMigrations
      const sql = yield* SqlClient.SqlClient
      yield* sql`INSERT INTO webhook_events (event_id, event_category, received_at)
                 SELECT 'wh_' || n, 'transfer', ${daysAgo(WEBHOOK_RETENTION_DAYS + 1)}
                 FROM generate_series(1, ${2 * HOUSEKEEPING_BATCH + 1}) AS n`
      yield* sql`INSERT INTO webhook_events (event_id, event_category) VALUES ('wh_new', 'transfer')`
      yield* yield* makeHousekeeping
      expect((yield* remaining).events).toEqual(["wh_new"])
    }).pipe(Effect.provide(Layer.merge(TestDatabaseLive, config))), 60_000)
})

/** A request log row made at `at`. */
const requestLog = (id: string, at: Date) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql`INSERT INTO request_logs (id, integration_id, request_id, at, method, path, status, duration_ms, key_id, key_last4,
          client_address, request_query, request_headers)
        VALUES (${id}, 'int_x', ${`req_${id}`}, ${at}, 'GET', '/api/integrations/breb/quote', 200, 1, 'key_x', 'abcd',
          '127.0.0.1', '{}'::jsonb, '{}'::jsonb)`
  )

const requestLogIds = Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ id: string }>`SELECT id FROM request_logs`)
  .pipe(Effect.map((rows) => rows.map((row) => row.id).sort()))

describe("request logs' retention", () => {
  it.live("the prune statement deletes the rows made before its cutoff, and only them", () =>
    Effect.gen(function*() {
      yield* runMigrations
      const now = new Date("2031-03-10T12:00:00.000Z")
      const cutoff = new Date(now.getTime() - REQUEST_LOG_RETENTION_DAYS * DAY)
      yield* requestLog("rl_older", new Date(cutoff.getTime() - 1))
      yield* requestLog("rl_at_cutoff", cutoff)
      yield* requestLog("rl_recent", new Date(now.getTime() - DAY))
      const retention = yield* makeRetentionRepo
      expect(yield* retention.requestLogsBefore(cutoff)(HOUSEKEEPING_BATCH)).toBe(1)
      expect(yield* requestLogIds).toEqual(["rl_at_cutoff", "rl_recent"])
    }).pipe(Effect.provide(TestDatabaseLive)), 60_000)

  it.live("housekeeping deletes the rows older than REQUEST_LOG_RETENTION_DAYS", () =>
    Effect.gen(function*() {
      yield* runMigrations
      yield* requestLog("rl_8_days", daysAgo(REQUEST_LOG_RETENTION_DAYS + 1))
      yield* requestLog("rl_6_days", daysAgo(REQUEST_LOG_RETENTION_DAYS - 1))
      yield* requestLog("rl_now", new Date())
      yield* yield* makeHousekeeping
      expect(yield* requestLogIds).toEqual(["rl_6_days", "rl_now"])
    }).pipe(Effect.provide(Layer.merge(TestDatabaseLive, config))), 60_000)
})

describe("payouts.status", () => {
  it.live("accepts exactly the contract's statuses", () =>
    Effect.gen(function*() {
      yield* runMigrations
      const sql = yield* SqlClient.SqlClient
      const allowed = yield* sql<{ def: string }>`SELECT pg_get_constraintdef(oid) AS def FROM pg_constraint
                                                  WHERE conrelid = 'payouts'::regclass AND contype = 'c'`
      const statuses = [...allowed.map((row) => row.def).join(" ").matchAll(/'([a-z_]+)'::text/g)].map((m) => m[1])
      expect(statuses.sort()).toEqual([...PayoutStatus.literals].sort())
    }).pipe(Effect.provide(TestDatabaseLive)), 60_000)

  it.live("refuses a status outside the list", () =>
    Effect.gen(function*() {
      yield* runMigrations
      const sql = yield* SqlClient.SqlClient
      yield* sql`INSERT INTO integrations (id, name) VALUES ('int_x', 'int_x')`
      const attempt = yield* Effect.flip(
        sql`INSERT INTO payouts ${sql.insert(payoutRow("po_bad", "shipped", new Date(), new Date()))}`
      )
      // v4: the driver's error is the SqlError's reason's cause
      expect(attempt.reason.cause).toMatchObject({ code: "23514", constraint: "payouts_status_allowed" }) // check_violation
    }).pipe(Effect.provide(TestDatabaseLive)), 60_000)
})
