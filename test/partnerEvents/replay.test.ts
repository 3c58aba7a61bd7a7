/**
 * Replaying a range (issue #35, part 2): `POST webhook-endpoints/{endpointId}/replay { from, to, types? }` sends the
 * integration's events of the range again to that endpoint, each once, in the order they were recorded, under their
 * own `webhook-id`, through the usual deliveries; `GET …/replays/{replayId}` shows its progress until it completes.
 * Bounded (from before to; at most MAX_REPLAY_EVENTS), only this integration's events, 409 for a disabled endpoint.
 */
import { MAX_REPLAY_EVENTS, WebhookReplay } from "@cop-integrations/contracts"
import { Effect, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { describe, expect, vi } from "vitest"
import { httpTest } from "../support/fixture.ts"
import { call, expectError, newPartner } from "../support/flows.ts"
import { type Delivery, receiverForTests } from "../support/webhookReceiver.ts"

const it = httpTest()
const API = "/api/integrations"
const receiver = receiverForTests()

const decodeReplay = Schema.decodeUnknownSync(WebhookReplay)

describe("replay a range of events", () => {
  it("sends the range's events again, in order, each once, and shows its progress", async ({ server }) => {
    const partner = await newPartner(server)
    const created = await partner.post(`${API}/webhook-endpoints`, { url: `${receiver.url}?replay`, events: ["*"] })
    expect(created.status, created.text).toBe(201)
    const { endpointId } = created.json as { endpointId: string }
    const mine = (d: Delivery) => d.event.data.object["endpointId"] === endpointId
    const pings: Array<{ id: string; createdAt: string }> = []
    for (let i = 0; i < 3; i++) {
      const pinged = await partner.post(`${API}/webhook-endpoints/${endpointId}/ping`, {})
      expect(pinged.status, pinged.text).toBe(202)
      pings.push(pinged.json as { id: string; createdAt: string })
    }
    await receiver.count(mine, 3)
    // another integration's event in the same range is never sent
    const other = await newPartner(server)
    await other.post(`${API}/webhook-endpoints`, { url: `${receiver.url}?other` })

    const from = pings[0]!.createdAt
    const to = new Date(Date.parse(pings[2]!.createdAt) + 1).toISOString()
    const started = await partner.post(`${API}/webhook-endpoints/${endpointId}/replay`, { from, to })
    expect(started.status, started.text).toBe(202)
    const replay = decodeReplay(started.json)
    expect(replay).toMatchObject({ endpointId, from, to, types: null, events: 3 })

    const again = await receiver.count(mine, 6)
    expect(again.slice(3).map((d) => d.id)).toEqual(pings.map((ping) => ping.id))
    const progress = await vi.waitFor(async () => {
      const answer = await partner.get(`${API}/webhook-endpoints/${endpointId}/replays/${replay.replayId}`)
      const read = decodeReplay(answer.json)
      expect(read.status).toBe("completed")
      return read
    })
    expect(progress).toMatchObject({ events: 3, delivered: 3, failed: 0, pending: 0 })

    // `types` narrows it; a range with none of them replays nothing and is completed at once
    const none = await partner.post(`${API}/webhook-endpoints/${endpointId}/replay`, {
      from,
      to,
      types: ["payout.completed"]
    })
    expect(decodeReplay(none.json)).toMatchObject({ events: 0, status: "completed", types: ["payout.completed"] })
  })

  it(`a range of more than ${MAX_REPLAY_EVENTS} events is 400 naming to, with nothing queued; ${MAX_REPLAY_EVENTS} are replayed`, async ({ server }) => {
    const partner = await newPartner(server)
    const created = await partner.post(`${API}/webhook-endpoints`, {
      url: `${receiver.url}?bulk`,
      events: ["payout.created"]
    })
    const { endpointId } = created.json as { endpointId: string }
    const start = Date.parse("2026-03-01T00:00:00.000Z")
    // one event a millisecond, each of its own payout
    await server.direct(
      Effect.flatMap(
        SqlClient.SqlClient,
        (sql) =>
          sql`INSERT INTO events (id, integration_id, type, resource_id, sequence, body, created_at)
          SELECT 'evt_bulk' || n || ${endpointId}, ${partner.integrationId}, 'payout.created', 'po_bulk' || n, 1,
                 '{"id":"evt_bulk' || n || '"}', ${new Date(start)}::timestamptz + n * interval '1 millisecond'
          FROM generate_series(0, ${MAX_REPLAY_EVENTS}) AS n`.pipe(Effect.orDie)
      )
    )
    const queued = () =>
      server.direct(
        Effect.flatMap(SqlClient.SqlClient, (sql) =>
          sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM event_deliveries WHERE endpoint_id = ${endpointId}`
            .pipe(
              Effect.map((rows) =>
                rows[0]?.n ?? 0
              ),
              Effect.orDie
            ))
      )
    const from = new Date(start).toISOString()
    const beyond = await partner.post(`${API}/webhook-endpoints/${endpointId}/replay`, {
      from,
      to: new Date(start + MAX_REPLAY_EVENTS + 1).toISOString()
    })
    expect(expectError(beyond, 400)).toBe(
      `to: the range holds ${
        MAX_REPLAY_EVENTS + 1
      } events, more than the ${MAX_REPLAY_EVENTS} a replay sends: replay it in parts`
    )
    expect(await queued()).toBe(0)
    const limit = await partner.post(`${API}/webhook-endpoints/${endpointId}/replay`, {
      from,
      to: new Date(start + MAX_REPLAY_EVENTS).toISOString()
    })
    expect(limit.status, limit.text).toBe(202)
    expect(decodeReplay(limit.json).events).toBe(MAX_REPLAY_EVENTS)
    expect(await queued()).toBe(MAX_REPLAY_EVENTS)
    // paused, its pending deliveries are canceled: the receiver is spared the rest
    const paused = await call(server.baseUrl, partner.apiKey, "PATCH", `${API}/webhook-endpoints/${endpointId}`, {
      body: { status: "disabled" }
    })
    expect(paused.status).toBe(200)
  })

  it("refuses a range that ends before it starts, an unknown endpoint and another integration's", async ({ server }) => {
    const partner = await newPartner(server)
    const other = await newPartner(server)
    const created = await partner.post(`${API}/webhook-endpoints`, { url: `${receiver.url}?refusals` })
    const { endpointId } = created.json as { endpointId: string }
    const at = new Date().toISOString()
    const backwards = await partner.post(`${API}/webhook-endpoints/${endpointId}/replay`, { from: at, to: at })
    expect(expectError(backwards, 400)).toBe("to: must be later than from")
    const badType = await partner.post(`${API}/webhook-endpoints/${endpointId}/replay`, {
      from: at,
      to: at,
      types: ["payout.stolen"]
    })
    expect(expectError(badType, 400)).toMatch(/types/)
    const range = { from: "2026-01-01T00:00:00.000Z", to: "2026-01-02T00:00:00.000Z" }
    expectError(await other.post(`${API}/webhook-endpoints/${endpointId}/replay`, range), 404)
    expectError(await partner.post(`${API}/webhook-endpoints/we_nonesuch/replay`, range), 404)
    const disabled = await call(server.baseUrl, partner.apiKey, "PATCH", `${API}/webhook-endpoints/${endpointId}`, {
      body: { status: "disabled" }
    })
    expect(disabled.status).toBe(200)
    expectError(await partner.post(`${API}/webhook-endpoints/${endpointId}/replay`, range), 409)
  })
})
