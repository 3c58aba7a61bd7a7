/**
 * PATCH /webhook-endpoints/{endpointId} (issue #31, the dashboard's webhook endpoints view): disable and enable an
 * endpoint, change its URL and event types. Disabling stops deliveries at once (no delivery is queued for it, its
 * pending ones, retries included, are canceled); enabling a disabled endpoint clears `disabledReason` and its failure
 * record, and deliveries resume for new events. Another integration's endpoint is 404 and stays as it was; bad input
 * is a 400 naming the field.
 */
import { WebhookEndpoint } from "@cop-integrations/contracts"
import { Schema } from "effect"
import { describe, expect, vi } from "vitest"
import { httpTest } from "../support/fixture.ts"
import { call, expectBadRequest, expectError, newPartner, type Partner, sql, type Wire } from "../support/flows.ts"
import { withClient } from "../support/server.ts"
import type { TestServer } from "../support/server.ts"
import { receiverForTests } from "../support/webhookReceiver.ts"

const API = "/api/integrations"
const ENDPOINTS = `${API}/webhook-endpoints`

const it = httpTest({
  // A failed attempt's retry waits an hour: it stays pending while the test looks at it.
  env: { MOCK_LIFECYCLE_DELAY_MS: "3600000", WEBHOOK_RETRY_BASE_MS: "3600000", WEBHOOK_TIMEOUT_MS: "2000" }
})

const receiver = receiverForTests()

const patch = (server: TestServer, who: Partner, endpointId: string, body: unknown): Promise<Wire> =>
  call(server.baseUrl, who.apiKey, "PATCH", `${ENDPOINTS}/${endpointId}`, { body })

const decoded = (wire: Wire, status = 200) => {
  expect(wire.status, wire.text).toBe(status)
  return Schema.decodeUnknownSync(WebhookEndpoint)(wire.json)
}

const register = async (who: Partner, body: Record<string, unknown> = { url: receiver.url }) => {
  const wire = await who.post(ENDPOINTS, body)
  expect(wire.status, wire.text).toBe(201)
  return decoded(wire, 201)
}

/** A new payout of `who`'s user: its `payout.created` event is recorded with it. */
const newEvent = async (who: Partner, user: string) => {
  const payout = await who.payout(user)
  const wire = await who.get(`${API}/events`, { resourceId: payout.payoutId })
  expect(wire.status, wire.text).toBe(200)
  const [event] = (wire.json as { items: Array<{ id: string }> }).items
  return { payoutId: payout.payoutId, eventId: event!.id }
}

/** The deliveries of `eventId` to `endpointId`, by state. */
const deliveries = async (server: TestServer, eventId: string, endpointId: string) =>
  (await sql<{ state: string }>(
    server,
    (q) =>
      q`SELECT state FROM event_deliveries WHERE event_id = ${eventId} AND endpoint_id = ${endpointId} ORDER BY seq`
  )).map((row) => row.state)

const endpointRow = async (server: TestServer, endpointId: string) => {
  const [row] = await sql<{ failing_since: Date | null; status: string; disabled_reason: string | null }>(
    server,
    (q) => q`SELECT status, disabled_reason, failing_since FROM webhook_endpoints WHERE id = ${endpointId}`
  )
  return row!
}

describe("PATCH /webhook-endpoints/{endpointId}", () => {
  it("disabling cancels pending deliveries and queues none; enabling resumes for new events", async ({ server, partner, user }) => {
    const endpoint = await register(partner)
    // An attempt that fails leaves its delivery pending, its retry an hour away.
    receiver.answer = () => 500
    const failing = await newEvent(partner, user)
    await receiver.next((d) => d.id === failing.eventId && d.answered === 500)
    await vi.waitFor(
      async () => expect((await endpointRow(server, endpoint.endpointId)).failing_since).not.toBeNull(),
      {
        timeout: 15_000,
        interval: 20
      }
    )
    expect(await deliveries(server, failing.eventId, endpoint.endpointId)).toEqual(["pending"])

    const disabled = decoded(await patch(server, partner, endpoint.endpointId, { status: "disabled" }))
    expect(disabled).toMatchObject({ endpointId: endpoint.endpointId, status: "disabled", url: endpoint.url })
    expect(disabled.disabledReason).toMatch(/^disabled by the integration at \d{4}-\d{2}-\d{2}T/)
    expect(disabled.updatedAt > endpoint.updatedAt || disabled.updatedAt === endpoint.updatedAt).toBe(true)
    expect(await deliveries(server, failing.eventId, endpoint.endpointId)).toEqual(["canceled"])
    expect(decoded(await partner.get(`${ENDPOINTS}/${endpoint.endpointId}`))).toEqual(disabled)

    // Events recorded while it is disabled are not queued for it; a ping is refused.
    const missed = await newEvent(partner, user)
    expect(await deliveries(server, missed.eventId, endpoint.endpointId)).toEqual([])
    expectError(await partner.post(`${ENDPOINTS}/${endpoint.endpointId}/ping`, {}), 409)
    // Disabling again changes nothing: the first reason and moment stay.
    expect(decoded(await patch(server, partner, endpoint.endpointId, { status: "disabled" }))).toEqual(disabled)

    receiver.answer = () => 200
    const enabled = decoded(await patch(server, partner, endpoint.endpointId, { status: "enabled" }))
    expect(enabled).toMatchObject({ status: "enabled", disabledReason: null })
    expect(await endpointRow(server, endpoint.endpointId)).toEqual({
      status: "enabled",
      disabled_reason: null,
      failing_since: null
    })
    const resumed = await newEvent(partner, user)
    await receiver.next((d) => d.id === resumed.eventId && d.answered === 200)
    // What was recorded while it was disabled stays unsent (redeliver it to send it).
    expect(await deliveries(server, missed.eventId, endpoint.endpointId)).toEqual([])
    expect(receiver.deliveries.filter((d) => d.id === missed.eventId)).toEqual([])
    const ping = await partner.post(`${ENDPOINTS}/${endpoint.endpointId}/ping`, {})
    expect(ping.status, ping.text).toBe(202)
  })

  it("enabling an endpoint disabled after failing for the retry window clears its reason and failure record", async ({ server, partner, user }) => {
    const endpoint = await register(partner, { url: receiver.url, events: ["payout.created"] })
    // As the delivery loop leaves an endpoint it gave up on.
    await sql(
      server,
      (q) =>
        q`UPDATE webhook_endpoints SET status = 'disabled', failing_since = now() - interval '4 days',
          disabled_reason = 'disabled 2026-01-01T00:00:00.000Z: every delivery failed for 3 days (last: answered HTTP 500)'
        WHERE id = ${endpoint.endpointId} RETURNING id`
    )
    const before = decoded(await partner.get(`${ENDPOINTS}/${endpoint.endpointId}`))
    expect(before.disabledReason).toContain("every delivery failed")
    // Disabling it again keeps the delivery loop's reason.
    expect(decoded(await patch(server, partner, endpoint.endpointId, { status: "disabled" })).disabledReason).toBe(
      before.disabledReason
    )

    const enabled = decoded(await patch(server, partner, endpoint.endpointId, { status: "enabled" }))
    expect(enabled).toMatchObject({ status: "enabled", disabledReason: null })
    expect((await endpointRow(server, endpoint.endpointId)).failing_since).toBeNull()
    const event = await newEvent(partner, user)
    await receiver.next((d) => d.id === event.eventId)
    await vi.waitFor(
      async () => expect(await deliveries(server, event.eventId, endpoint.endpointId)).toEqual(["delivered"]),
      { timeout: 15_000, interval: 20 }
    )
    // Enabling an enabled endpoint changes nothing.
    expect(decoded(await patch(server, partner, endpoint.endpointId, { status: "enabled" }))).toEqual(
      decoded(await partner.get(`${ENDPOINTS}/${endpoint.endpointId}`))
    )
  })

  it("changes the URL and the event types, checked as at creation", async ({ server, partner, user }) => {
    const endpoint = await register(partner, { url: "http://127.0.0.1:9/old", events: ["kyc.approved"] })
    const changed = decoded(
      await patch(server, partner, endpoint.endpointId, {
        url: receiver.url,
        events: ["payout.created", "payout.created"]
      })
    )
    expect(changed).toMatchObject({ url: receiver.url, events: ["payout.created"], status: "enabled" })
    expect(Date.parse(changed.updatedAt)).toBeGreaterThanOrEqual(Date.parse(endpoint.updatedAt))
    const event = await newEvent(partner, user)
    await receiver.next((d) => d.id === event.eventId)
    // Unchanged fields are left as they were.
    expect(decoded(await patch(server, partner, endpoint.endpointId, { events: ["*"] }))).toMatchObject({
      url: receiver.url,
      events: ["*"]
    })
  })

  it("refuses bad input with a 400 naming the field; an empty change changes nothing", async ({ server, partner }) => {
    const endpoint = await register(partner)
    const refused: ReadonlyArray<[unknown, string]> = [
      [{ status: "paused" }, "status"],
      [{ status: null }, "status"],
      [{ url: "" }, "url"],
      [{ url: "not a url" }, "url"],
      [{ url: "ftp://example.com/hooks" }, "url"],
      [{ events: [] }, "events"],
      [{ events: ["payout.lost"] }, "events"],
      [{ status: "disabled", secret: "whsec_x" }, "secret"]
    ]
    for (const [body, field] of refused) {
      expectBadRequest(await patch(server, partner, endpoint.endpointId, body), field)
    }
    expect(decoded(await partner.get(`${ENDPOINTS}/${endpoint.endpointId}`))).toEqual(endpoint)
    // Nothing to set: the endpoint as it is.
    expect(decoded(await patch(server, partner, endpoint.endpointId, {}))).toEqual(endpoint)
  })

  it("another integration's endpoint, or a deleted one, is 404 and stays as it was", async ({ server, partner }) => {
    const other = await newPartner(server)
    const theirs = await register(other)
    expectError(await patch(server, partner, theirs.endpointId, { status: "disabled" }), 404)
    expectError(await patch(server, partner, theirs.endpointId, { url: receiver.url }), 404)
    expect(decoded(await other.get(`${ENDPOINTS}/${theirs.endpointId}`))).toEqual(theirs)

    const mine = await register(partner)
    const removed = await call(server.baseUrl, partner.apiKey, "DELETE", `${ENDPOINTS}/${mine.endpointId}`)
    expect(removed.status).toBe(204)
    expectError(await patch(server, partner, mine.endpointId, { status: "enabled" }), 404)
    const [row] = await sql<{ status: string }>(
      server,
      (q) => q`SELECT status FROM webhook_endpoints WHERE id = ${mine.endpointId}`
    )
    expect(row?.status).toBe("enabled")
  })

  it("works through the typed client", async ({ server, partner }) => {
    const endpoint = await register(partner)
    const updated = await withClient(
      server.baseUrl,
      partner.apiKey,
      (client) =>
        client.events.updateWebhookEndpoint({
          params: { endpointId: endpoint.endpointId },
          payload: { status: "disabled" }
        })
    )
    expect(updated.status).toBe("disabled")
  })
})
