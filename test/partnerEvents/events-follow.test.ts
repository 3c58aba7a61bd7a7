/**
 * GET events is safe to follow: a partner paging with the `nextCursor` it was given (and polling its last page again
 * at the end of the list) sees every event exactly once, each resource's events in `sequence` order, while writers on
 * two replicas of one database record events concurrently (payouts created and moved through their lifecycle, two
 * moves of one payout racing) and one event's transaction commits late: a lock this test holds keeps it open after
 * its event row is written, until the follower has read past everything committed meanwhile.
 */
import { EventList, WebhookEndpointWithSecret } from "@cop-integrations/contracts"
import { Effect, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { describe, expect, vi } from "vitest"
import { httpTest } from "../support/fixture.ts"
import { call, newPartner, type Partner, type Wire } from "../support/flows.ts"
import { follower, repeated } from "../support/follower.ts"
import { holdLock, patientDatabase } from "../support/locks.ts"
import type { TestServer } from "../support/server.ts"
import { receiverForTests } from "../support/webhookReceiver.ts"

const API = "/api/integrations"
const ENV = { MOCK_LIFECYCLE_DELAY_MS: "3600000" }
const PAYOUTS = 24
const WRITERS = 6
const DEADLINE_MS = 60_000

// `server` and its `replica`: two app instances on one database
const it = httpTest({ env: ENV, overrides: patientDatabase })

const receiver = receiverForTests()

/** The partner's calls through either replica. */
const on = (server: TestServer, partner: Partner) => ({
  get: (path: string, query: Record<string, string>) => call(server.baseUrl, partner.apiKey, "GET", path, { query }),
  post: (path: string, body: unknown) => call(server.baseUrl, partner.apiKey, "POST", path, { body })
})
const replicas = (first: TestServer, second: TestServer, partner: Partner) =>
  [on(first, partner), on(second, partner)] as const

const ok = (wire: Wire, status = 200) => {
  expect(wire.status, wire.text).toBe(status)
  return wire.json
}

const advance = (via: ReturnType<typeof on>, payoutId: string, to: string) =>
  via.post(`${API}/test-helpers/payouts/${payoutId}/advance`, { to })

/** Every event of the partner's integration in the database: id, resource and sequence. */
const storedEvents = (server: TestServer, partner: Partner) =>
  server.direct(
    Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql<{ readonly id: string; readonly resource_id: string; readonly sequence: number }>`
      SELECT id, resource_id, sequence FROM events WHERE integration_id = ${partner.integrationId}`.pipe(Effect.orDie))
  )

/** Backends of the test database waiting on a lock while inserting event deliveries. */
const deliveryInsertsWaiting = (server: TestServer) =>
  server.direct(Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ readonly n: number }>`
      SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%INSERT INTO event_deliveries%'`
      .pipe(Effect.map((rows) => rows[0]?.n ?? 0), Effect.orDie)))

/** One payout's life, its calls spread over both replicas (`on` each of them); every third has two moves racing. */
const lifecycle = async (
  both: ReturnType<typeof replicas>,
  index: number,
  user: string
) => {
  const [here, there] = index % 2 === 0 ? both : [...both].reverse()
  const created = ok(
    await here.post(`${API}/breb/payouts`, {
      userAddress: user,
      destinationCop: `${20000 + index}`,
      breBKey: "@maria2024",
      accountOwnerName: "Maria Perez"
    }),
    201
  ) as { readonly payoutId: string }
  if (index % 3 === 0) {
    const race = await Promise.all([
      advance(here, created.payoutId, "processing"),
      advance(there, created.payoutId, "completed")
    ])
    expect(race.some((wire) => wire.status === 200), race.map((wire) => wire.text).join("\n")).toBe(true)
    return
  }
  ok(await advance(there, created.payoutId, "processing"))
  ok(await advance(here, created.payoutId, "completed"))
}

describe("event positions", () => {
  it("are given by the worker too, to the events of an integration no one lists", async ({ server: first }) => {
    const quiet = await newPartner(first)
    const endpoint = Schema.decodeUnknownSync(WebhookEndpointWithSecret)(
      ok(await quiet.post(`${API}/webhook-endpoints`, { url: receiver.url }), 201)
    )
    const ping = ok(await quiet.post(`${API}/webhook-endpoints/${endpoint.endpointId}/ping`, {}), 202) as {
      readonly id: string
    }
    await vi.waitFor(async () => {
      const [row] = await first.direct(
        Effect.flatMap(
          SqlClient.SqlClient,
          (sql) =>
            sql<{ readonly position: string | null }>`SELECT position FROM events WHERE id = ${ping.id}`.pipe(
              Effect.orDie
            )
        )
      )
      expect(row?.position).not.toBeNull()
    }, { timeout: DEADLINE_MS, interval: 100 })
  })
})

describe("following GET events with its cursor", () => {
  it(
    "shows every event once, each resource's in sequence order, with concurrent writers on two replicas and a late commit",
    async ({ server: first, replica: second, partner, user }) => {
      const both = replicas(first, second, partner)
      const slow = Schema.decodeUnknownSync(WebhookEndpointWithSecret)(
        ok(await partner.post(`${API}/webhook-endpoints`, { url: receiver.url, events: ["payout.failed"] }), 201)
      )

      let reads = 0
      const events = follower(async (cursor) => {
        const via = both[reads++ % 2]!
        const query: Record<string, string> = cursor === null ? { limit: "7" } : { limit: "7", cursor }
        return Schema.decodeUnknownSync(EventList)(ok(await via.get(`${API}/events`, query)))
      }, (event) => event.id)
      let following = true
      const followed = (async () => {
        while (following) {
          await events.poll()
          await new Promise((resolve) => setTimeout(resolve, 10))
        }
      })()

      // The late one: its event is written, then its transaction waits on the endpoint row this test holds (the
      // delivery's foreign key), so it commits after everything below.
      const late = ok(
        await partner.post(`${API}/breb/payouts`, {
          userAddress: user,
          destinationCop: "30000",
          breBKey: "@maria2024",
          accountOwnerName: "Maria Perez"
        }),
        201
      ) as { readonly payoutId: string }
      const held = await holdLock(
        first.direct,
        `SELECT 1 FROM webhook_endpoints WHERE id = '${slow.endpointId}' FOR UPDATE`
      )
      const failing = advance(both[0], late.payoutId, "failed")
      await vi.waitFor(async () => expect(await deliveryInsertsWaiting(first)).toBe(1), {
        timeout: DEADLINE_MS,
        interval: 20
      })

      const queue = Array.from({ length: PAYOUTS }, (_, i) => i)
      await Promise.all(Array.from({ length: WRITERS }, async () => {
        for (let next = queue.shift(); next !== undefined; next = queue.shift()) await lifecycle(both, next, user)
      }))

      // The follower has read everything committed so far (all but the late event), through both replicas.
      const seenIds = () => new Set<string>(events.seen.map((event) => event.id))
      await vi.waitFor(async () => {
        const stored = await storedEvents(first, partner)
        expect(stored.filter((event) => !seenIds().has(event.id)).length).toBe(0)
      }, { timeout: DEADLINE_MS, interval: 50 })

      await held.release()
      ok(await failing)

      const deadline = Date.now() + 15_000
      let stored = await storedEvents(first, partner)
      while (Date.now() < deadline && stored.some((event) => !seenIds().has(event.id))) {
        await new Promise((resolve) => setTimeout(resolve, 50))
        stored = await storedEvents(first, partner)
      }
      following = false
      await followed

      const missing = stored.filter((event) => !seenIds().has(event.id))
      expect.soft(
        missing.map((event) => `${event.id} (${event.resource_id} #${event.sequence})`),
        "events never listed"
      )
        .toEqual([])
      expect.soft(repeated(events.seen.map((event) => event.id)), "events listed twice").toEqual([])
      expect.soft(events.reshuffled, "a page read again did not start with what it held").toEqual([])

      const resourceOf = new Map(stored.map((event) => [event.id, event.resource_id]))
      const outOfOrder: Array<string> = []
      const lastSequence = new Map<string, number>()
      for (const event of events.seen) {
        const resource = resourceOf.get(event.id)!
        if ((lastSequence.get(resource) ?? 0) >= event.sequence) {
          outOfOrder.push(`${resource}: #${event.sequence} after #${lastSequence.get(resource)}`)
        }
        lastSequence.set(resource, event.sequence)
      }
      expect.soft(outOfOrder, "a resource's events listed out of sequence order").toEqual([])
      expect(stored.length).toBeGreaterThan(PAYOUTS * 2)
    },
    240_000
  )
})
