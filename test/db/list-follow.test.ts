/**
 * The payouts and swaps lists are safe to follow in their documented order (createdAt, then id): a partner paging
 * with `nextCursor` (and polling its last page again at the end) sees every resource exactly once, while two replicas
 * of one database create resources concurrently and one create commits late. The late one is held after it has its
 * `createdAt`: this test takes the resource's id first (an uncommitted row with that id, rolled back on release), so
 * the app's INSERT waits on it; the id is known in advance because the request takes over an Idempotency-Key row this
 * test wrote (handed back, as a request that failed after an outside call leaves it, with that resource id).
 */
import { PayoutList, SwapList } from "@cop-integrations/contracts"
import { Effect, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { describe, expect, vi } from "vitest"
import { newId } from "../../src/base/ids.ts"
import { requestFingerprint } from "../../src/idempotency/IdempotencyStore.ts"
import { PAYOUTS_PATH } from "../../src/payouts/PayoutService.ts"
import { SWAPS_PATH } from "../../src/swaps/SwapService.ts"
import { httpTest } from "../support/fixture.ts"
import { call, newPartner, type Partner, type Wire } from "../support/flows.ts"
import { follower, repeated } from "../support/follower.ts"
import { holdUncommitted, patientDatabase } from "../support/locks.ts"
import { payoutRow } from "../support/payoutRow.ts"
import type { TestServer } from "../support/server.ts"

const ENV = { MOCK_LIFECYCLE_DELAY_MS: "3600000" }
const CREATES = 24
const WRITERS = 6
const DEADLINE_MS = 60_000

// `server` and its `replica`: two app instances on one database
const it = httpTest({ env: ENV, overrides: patientDatabase })

const ok = (wire: Wire, status = 200) => {
  expect(wire.status, wire.text).toBe(status)
  return wire.json
}

interface Listed {
  readonly id: string
  readonly createdAt: string
}

/** What differs between the two lists. */
interface Kind {
  readonly path: string
  readonly table: "payouts" | "swap_intents"
  readonly newId: () => string
  readonly body: (index: number, user: string) => Record<string, unknown>
  readonly page: (json: unknown) => { readonly items: ReadonlyArray<Listed>; readonly nextCursor: string | null }
  /** An uncommitted row with the resource's id, enough for the app's INSERT of that id to wait on it. */
  readonly placeholder: (sql: SqlClient.SqlClient, id: string, integrationId: string) => Effect.Effect<unknown, unknown>
}

const payouts: Kind = {
  path: PAYOUTS_PATH,
  table: "payouts",
  newId: () => newId("po"),
  body: (index, user) => ({
    userAddress: user,
    destinationCop: `${20000 + index}`,
    breBKey: "@maria2024",
    accountOwnerName: "Maria Perez"
  }),
  page: (json) => {
    const page = Schema.decodeUnknownSync(PayoutList)(json)
    return { items: page.items.map((p) => ({ id: p.payoutId, createdAt: p.createdAt })), nextCursor: page.nextCursor }
  },
  placeholder: (sql, id, integrationId) =>
    sql`INSERT INTO payouts ${
      sql.insert({ ...payoutRow(id, "awaiting_deposit", new Date(), new Date()), integration_id: integrationId })
    }`
}

const swaps: Kind = {
  path: SWAPS_PATH,
  table: "swap_intents",
  newId: () => newId("sw"),
  body: (index, user) => ({
    userAddress: user,
    fromToken: "USDC",
    toToken: "COPm",
    amountIn: `${10 + index}.5`,
    slippageBps: 50
  }),
  page: (json) => {
    const page = Schema.decodeUnknownSync(SwapList)(json)
    return { items: page.items.map((s) => ({ id: s.intentId, createdAt: s.createdAt })), nextCursor: page.nextCursor }
  },
  placeholder: (sql, id, integrationId) =>
    sql`INSERT INTO swap_intents ${
      sql.insert({
        id,
        integration_id: integrationId,
        status: "prepared",
        user_address: "0xabc",
        from_token: "USDC",
        to_token: "COPm",
        amount_in: "1",
        expected_amount_out: "1",
        min_amount_out: "1",
        slippage_bps: 50,
        fee_legs: "[]",
        transaction: "{}",
        created_at: new Date(),
        updated_at: new Date(),
        expires_at: new Date()
      })
    }`
}

/** The (createdAt, id) order the lists document. */
const before = (a: Listed, b: Listed) => a.createdAt < b.createdAt || (a.createdAt === b.createdAt && a.id < b.id)

/** A swap needs no KYC: any address. */
const SWAP_USER = "0x52908400098527886E0F7030069857D2E4169EE7"

/**
 * The partner follows `kind`'s list through both replicas while `user`'s resources are created on both; `filters`
 * (which every created resource matches) go with every page.
 */
const followsSafely = async (
  kind: Kind,
  first: TestServer,
  second: TestServer,
  partner: Partner,
  user: string,
  filters: Record<string, string> = {}
) => {
  const via = (server: TestServer) => ({
    get: (query: Record<string, string>) => call(server.baseUrl, partner.apiKey, "GET", kind.path, { query }),
    create: (body: unknown, headers: Record<string, string> = {}) =>
      call(server.baseUrl, partner.apiKey, "POST", kind.path, { body, headers })
  })
  const replicas = [via(first), via(second)] as const

  let reads = 0
  let polls = 0
  const list = follower(async (cursor) => {
    const query: Record<string, string> = cursor === null
      ? { ...filters, limit: "3" }
      : { ...filters, limit: "3", cursor }
    return kind.page(ok(await replicas[reads++ % 2]!.get(query)))
  }, (item) => item.id)
  let following = true
  const followed = (async () => {
    while (following) {
      await list.poll()
      polls++
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
  })()

  try {
    // The late one: its request takes over a key row naming an id this test holds, so its INSERT waits.
    const lateId = kind.newId()
    const lateBody = kind.body(999, user)
    const key = `late-${lateId}`
    await first.direct(Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql`INSERT INTO idempotency_keys
            (integration_id, idempotency_key, request_hash, state, response_status, response_body, resource_id,
             provider_key, attempt, started_at)
          VALUES (${partner.integrationId}, ${key}, ${requestFingerprint("POST", kind.path, lateBody)}, 'started', 0,
                  '{}'::jsonb, ${lateId}, ${`provider-${lateId}`}, NULL, now())`.pipe(Effect.orDie)))
    const held = await holdUncommitted(first.direct, (sql) => kind.placeholder(sql, lateId, partner.integrationId))
    const late = replicas[0].create(lateBody, { "idempotency-key": key })
    await vi.waitFor(async () => {
      const [row] = await first.direct(Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql<{ readonly n: number }>`
          SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock'
            AND query LIKE ${`%INSERT INTO ${kind.table}%`}`.pipe(Effect.orDie)))
      expect(row?.n).toBe(1)
    }, { timeout: DEADLINE_MS, interval: 20 })

    const queue = Array.from({ length: CREATES }, (_, i) => i)
    await Promise.all(Array.from({ length: WRITERS }, async (_, writer) => {
      for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
        ok(await replicas[(writer + next) % 2]!.create(kind.body(next, user)), 201)
      }
    }))
    // The follower has polled the list twice since: it has been shown whatever the list shows of them.
    const mark = polls
    await vi.waitFor(() => expect(polls).toBeGreaterThanOrEqual(mark + 2), { timeout: DEADLINE_MS, interval: 20 })

    await held.release()
    const lateCreatedAt = (ok(await late, 201) as { readonly createdAt: string }).createdAt

    const stored = async () =>
      (await first.direct(
        Effect.flatMap(SqlClient.SqlClient, (sql) =>
          sql<{ readonly id: string }>`SELECT id FROM ${
            sql(kind.table)
          } WHERE integration_id = ${partner.integrationId}`
            .pipe(Effect.orDie))
      )).map((row) =>
        row.id
      )
    const seen = () => new Set(list.seen.map((item) => item.id))
    const deadline = Date.now() + 15_000
    let ids = await stored()
    while (Date.now() < deadline && ids.some((id) => !seen().has(id))) {
      await new Promise((resolve) => setTimeout(resolve, 50))
      ids = await stored()
    }
    expect(ids).toContain(lateId)
    // It was late indeed: it is listed before resources committed while it was held.
    expect(list.seen.filter((item) => item.createdAt > lateCreatedAt).length).toBeGreaterThan(0)
    expect.soft(ids.filter((id) => !seen().has(id)), "never listed").toEqual([])
    expect.soft(repeated(list.seen.map((item) => item.id)), "listed twice").toEqual([])
    expect.soft(list.reshuffled, "a page read again did not start with what it held").toEqual([])
    const disordered = list.seen.flatMap((item, i) =>
      i > 0 && !before(list.seen[i - 1]!, item) ? [`${item.id} (${item.createdAt}) after ${list.seen[i - 1]!.id}`] : []
    )
    expect.soft(disordered, "listed out of (createdAt, id) order").toEqual([])
    expect(ids.length).toBe(CREATES + 1)
  } finally {
    following = false
    await followed
  }
}

describe("following a list with its cursor, with concurrent creates on two replicas and a late commit", () => {
  it(
    "GET payouts shows every payout once, in (createdAt, payoutId) order",
    ({ server, replica, partner, user }) => followsSafely(payouts, server, replica, partner, user),
    240_000
  )
  it(
    "GET swaps shows every swap once, in (createdAt, intentId) order",
    ({ server, replica, partner }) => followsSafely(swaps, server, replica, partner, SWAP_USER),
    240_000
  )
  it(
    "GET payouts filtered (status, breBKeyLast4, createdTo) shows every matching payout once, in order",
    async ({ server, replica }) => {
      // An integration of its own: every payout it has is one the filters match.
      const partner = await newPartner(server)
      const user = await partner.approvedUser()
      await followsSafely(payouts, server, replica, partner, user, {
        status: "awaiting_deposit",
        breBKeyLast4: "2024",
        createdTo: "2100-01-01T00:00:00.000Z"
      })
    },
    240_000
  )
})
