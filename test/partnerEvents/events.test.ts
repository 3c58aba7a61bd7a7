/**
 * Events to partners, end to end over real HTTP: a partner registers an endpoint on a real receiver, drives payouts
 * and KYC to every outcome, and receives signed events that `standardwebhooks` (an implementation we did not write)
 * verifies. Also: the outbox is atomic with the state change, per-resource order survives retries, rotation signs
 * with both secrets, redelivery repeats the same bytes under the same `webhook-id`.
 */
import {
  Event,
  EventList,
  EventWithAttempts,
  WebhookEndpoint,
  WebhookEndpointWithSecret
} from "@cop-integrations/contracts"
import { SqlClient } from "effect/sql"
import { Effect, Schema } from "effect"
import { Webhook } from "standardwebhooks"
import { describe, expect, vi } from "vitest"
import { httpTest } from "../support/fixture.ts"
import { Lifecycle } from "../../src/payouts/Lifecycle.ts"
import { bridgeProgress } from "../../src/provider/bridge/TransferStates.ts"
import {
  expectBadRequest,
  expectError,
  expirePayoutWindow,
  newPartner,
  newTxHash,
  pageAll,
  type Partner,
  runApp,
  sql
} from "../support/flows.ts"
import type { TestServer } from "../support/server.ts"
import { type Delivery, receiverForTests } from "../support/webhookReceiver.ts"

const API = "/api/integrations"

const it = httpTest({
  // the mock lifecycle stays out of the way: outcomes come from the test helpers
  env: { MOCK_LIFECYCLE_DELAY_MS: "3600000", WEBHOOK_RETRY_BASE_MS: "20", WEBHOOK_TIMEOUT_MS: "2000" }
})

const receiver = receiverForTests()

const register = async (who: Partner, body: Record<string, unknown>) => {
  const wire = await who.post(`${API}/webhook-endpoints`, body)
  expect(wire.status, wire.text).toBe(201)
  return Schema.decodeUnknownSync(WebhookEndpointWithSecret)(wire.json)
}

const advance = async (partner: Partner, payoutId: string, to: string) => {
  const wire = await partner.post(`${API}/test-helpers/payouts/${payoutId}/advance`, { to })
  expect(wire.status, wire.text).toBe(200)
}

const verified = (secret: string, delivery: Delivery) =>
  new Webhook(secret).verify(delivery.body, {
    "webhook-id": delivery.id,
    "webhook-timestamp": delivery.timestamp,
    "webhook-signature": delivery.signature
  })

const forResource = (id: string) => (delivery: Delivery) =>
  (delivery.event.data.object["payoutId"] ?? delivery.event.data.object["userAddress"]) === id

const answered = (status: number) => (delivery: Delivery) => delivery.answered === status

describe("webhook endpoints", () => {
  it("registers an endpoint whose secret is shown once, lists, gets and deletes it", async ({ server, partner }) => {
    const created = await register(partner, { url: receiver.url, events: ["payout.completed"] })
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]+={0,2}$/)
    expect(created.events).toEqual(["payout.completed"])
    const got = await partner.get(`${API}/webhook-endpoints/${created.endpointId}`)
    expect(got.status).toBe(200)
    expect(got.json).not.toHaveProperty("secret")
    expect(Schema.decodeUnknownSync(WebhookEndpoint)(got.json).status).toBe("enabled")
    const listed = await partner.get(`${API}/webhook-endpoints`)
    expect((listed.json as { items: Array<{ endpointId: string }> }).items.map((e) => e.endpointId)).toContain(
      created.endpointId
    )

    const removed = await call(server, partner, "DELETE", `${API}/webhook-endpoints/${created.endpointId}`)
    expect(removed).toBe(204)
    expectError(await partner.get(`${API}/webhook-endpoints/${created.endpointId}`), 404)
  })

  it("refuses bad input with a 400 naming the field and the rule", async ({ partner }) => {
    expectBadRequest(await partner.post(`${API}/webhook-endpoints`, { url: "not a url" }), "url")
    expectBadRequest(await partner.post(`${API}/webhook-endpoints`, { url: "ftp://example.com/x" }), "url")
    expectBadRequest(
      await partner.post(`${API}/webhook-endpoints`, { url: receiver.url, events: ["payout.done"] }),
      "events"
    )
    expectBadRequest(await partner.post(`${API}/webhook-endpoints`, { url: receiver.url, events: [] }), "events")
    expectBadRequest(await partner.post(`${API}/webhook-endpoints`, { url: receiver.url, event: ["*"] }), "event")
  })

  it("another integration's endpoints and events are 404", async ({ server, partner }) => {
    const other = await newPartner(server)
    const endpoint = await register(other, { url: receiver.url, events: ["endpoint.ping"] })
    expectError(await partner.get(`${API}/webhook-endpoints/${endpoint.endpointId}`), 404)
    expectError(await partner.post(`${API}/webhook-endpoints/${endpoint.endpointId}/ping`, {}), 404)
    const ping = Schema.decodeUnknownSync(Event)(
      (await other.post(`${API}/webhook-endpoints/${endpoint.endpointId}/ping`, {})).json
    )
    expectError(await partner.get(`${API}/events/${ping.id}`), 404)
    expectError(await partner.post(`${API}/events/${ping.id}/redeliver`, {}), 404)
    await receiver.next((d) => d.id === ping.id)
    await call(server, other, "DELETE", `${API}/webhook-endpoints/${endpoint.endpointId}`)
  })
})

const call = async (server: TestServer, who: Partner, method: string, path: string) => {
  const response = await fetch(`${server.baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${who.apiKey}` }
  })
  await response.arrayBuffer()
  return response.status
}

describe("events delivered to a partner", () => {
  let secret: string
  let endpointId: string
  let user: `0x${string}`

  it.beforeAll(async ({ partner }) => {
    const endpoint = await register(partner, { url: receiver.url })
    secret = endpoint.secret
    endpointId = endpoint.endpointId
    user = await partner.approvedUser()
  })

  it("a payout's events arrive signed (verified by standardwebhooks), in order, each the resource as the API returns it", async ({ partner }) => {
    const payout = await partner.payout(user)
    const confirmed = await partner.confirm(payout.payoutId, { txHash: newTxHash() })
    expect(confirmed.status, confirmed.text).toBe(200)
    await advance(partner, payout.payoutId, "processing")
    await advance(partner, payout.payoutId, "completed")

    const got = await receiver.count(forResource(payout.payoutId), 4)
    expect(got.map((d) => d.event.type)).toEqual([
      "payout.created",
      "payout.deposit_confirmed",
      "payout.processing",
      "payout.completed"
    ])
    for (const delivery of got) {
      expect(verified(secret, delivery)).toEqual(JSON.parse(delivery.body))
      expect(delivery.id).toBe(delivery.event.id)
      const event = Schema.decodeUnknownSync(Event)(JSON.parse(delivery.body))
      expect(event.data.object).toMatchObject({
        payoutId: payout.payoutId,
        status: event.type.slice("payout.".length).replace("created", "awaiting_deposit")
      })
    }
    const final = await partner.getPayout(payout.payoutId)
    expect(JSON.parse(got[3]!.body).data.object).toEqual(final.json)
  })

  it("a tampered body or a wrong secret does not verify", async ({ partner }) => {
    const payout = await partner.payout(user)
    const created = await receiver.next((d) => forResource(payout.payoutId)(d) && d.event.type === "payout.created")
    expect(() => verified(secret, { ...created, body: created.body.replace(payout.payoutId, "po_other") })).toThrow()
    expect(() => verified(`whsec_${Buffer.alloc(32, 7).toString("base64")}`, created)).toThrow()
  })

  it("every outcome can be produced on demand: failed, then refunded; KYC rejected", async ({ partner }) => {
    const payout = await partner.payout(user)
    await advance(partner, payout.payoutId, "failed")
    await advance(partner, payout.payoutId, "refunded")
    const got = await receiver.count(forResource(payout.payoutId), 3)
    expect(got.map((d) => d.event.type)).toEqual(["payout.created", "payout.failed", "payout.refunded"])

    const rejected = await partner.post(`${API}/test-helpers/kyc/${user}/reject`, {})
    expect(rejected.status, rejected.text).toBe(200)
    expect(rejected.json).toMatchObject({ userAddress: user, kycStatus: "rejected" })
    const kyc = await receiver.next((d) => d.event.type === "kyc.rejected" && forResource(user)(d))
    expect(verified(secret, kyc)).toMatchObject({ data: { object: { userAddress: user, kycStatus: "rejected" } } })
    user = await partner.approvedUser()
  })

  it("the test helpers only move forward (409) and know only this integration's payouts (404)", async ({ server, partner }) => {
    const payout = await partner.payout(user)
    await advance(partner, payout.payoutId, "completed")
    expectError(await partner.post(`${API}/test-helpers/payouts/${payout.payoutId}/advance`, { to: "processing" }), 409)
    expectError(await partner.post(`${API}/test-helpers/payouts/${payout.payoutId}/advance`, { to: "failed" }), 409)
    expectBadRequest(
      await partner.post(`${API}/test-helpers/payouts/${payout.payoutId}/advance`, { to: "expired" }),
      "to"
    )
    const other = await newPartner(server)
    expectError(await other.post(`${API}/test-helpers/payouts/${payout.payoutId}/advance`, { to: "refunded" }), 404)
  })

  it("order per payout holds when the earlier event needs retries: completed waits for processing", async ({ partner }) => {
    receiver.answer = (delivery, seen) => (delivery.event.type === "payout.processing" && seen < 3 ? 500 : 200)
    const payout = await partner.payout(user)
    await advance(partner, payout.payoutId, "processing")
    await advance(partner, payout.payoutId, "completed")
    const ok = await receiver.count((d) => forResource(payout.payoutId)(d) && d.answered === 200, 4)
    expect(ok.map((d) => d.event.type)).toEqual([
      "payout.created",
      "payout.deposit_confirmed",
      "payout.processing",
      "payout.completed"
    ])
    const processing = receiver.deliveries.filter((d) =>
      forResource(payout.payoutId)(d) && d.event.type === "payout.processing"
    )
    expect(processing.map((d) => d.answered)).toEqual([500, 500, 500, 200])
    expect(new Set(processing.map((d) => d.id)).size).toBe(1)
    expect(new Set(processing.map((d) => d.body)).size).toBe(1)
  })

  it("GET /events/{id} shows every attempt; the events list pages and filters by type", async ({ partner }) => {
    receiver.answer = (delivery, seen) => (delivery.event.type === "payout.failed" && seen < 2 ? 503 : 200)
    const payout = await partner.payout(user)
    await advance(partner, payout.payoutId, "failed")
    const delivered = await receiver.next((d) =>
      forResource(payout.payoutId)(d) && d.event.type === "payout.failed" && answered(200)(d)
    )
    // the attempt is recorded once the receiver's answer is in: poll (bounded) until it is
    const detail = await vi.waitFor(async () => {
      const wire = await partner.get(`${API}/events/${delivered.id}`)
      expect(wire.status, wire.text).toBe(200)
      const event = Schema.decodeUnknownSync(EventWithAttempts)(wire.json)
      const mine = event.attempts.filter((a) => a.endpointId === endpointId)
      expect(mine.map((a) => [a.outcome, a.responseStatus])).toEqual([["failed", 503], ["failed", 503], [
        "succeeded",
        200
      ]])
      return wire
    }, { timeout: 5000, interval: 20 })
    const { attempts: _attempts, ...withoutAttempts } = detail.json as Record<string, unknown>
    expect(withoutAttempts).toEqual(JSON.parse(delivered.body))

    const failedOnly = Schema.decodeUnknownSync(EventList)(
      (await partner.get(`${API}/events`, { type: "payout.failed", limit: "1" })).json
    )
    expect(failedOnly.items).toHaveLength(1)
    expect(failedOnly.items.every((e) => e.type === "payout.failed")).toBe(true)
    const listed = await pageAll(
      {},
      2,
      async (query) => Schema.decodeUnknownSync(EventList)((await partner.get(`${API}/events`, query)).json)
    )
    const all = listed.map((e) => e.id)
    expect(new Set(all).size).toBe(all.length)
    expect(all).toContain(delivered.id)
    expect([...all].sort()).toEqual(all)
  })

  it("redelivery sends the same bytes under the same webhook-id", async ({ partner }) => {
    const payout = await partner.payout(user)
    const first = await receiver.next((d) => forResource(payout.payoutId)(d) && d.event.type === "payout.created")
    const wire = await partner.post(`${API}/events/${first.id}/redeliver`, {})
    expect(wire.status, wire.text).toBe(202)
    expect(wire.json).toEqual({ eventId: first.id, endpointIds: [endpointId] })
    const again = await receiver.count((d) => d.id === first.id, 2)
    expect(again[1]!.body).toBe(first.body)
    expect(verified(secret, again[1]!)).toEqual(JSON.parse(first.body))
  })

  it("after rotate-secret, deliveries carry both signatures: old and new secret each verify", async ({ partner }) => {
    const rotated = await partner.post(`${API}/webhook-endpoints/${endpointId}/rotate-secret`, {})
    expect(rotated.status, rotated.text).toBe(200)
    const next = Schema.decodeUnknownSync(WebhookEndpointWithSecret)(rotated.json).secret
    expect(next).not.toBe(secret)
    const ping = Schema.decodeUnknownSync(Event)(
      (await partner.post(`${API}/webhook-endpoints/${endpointId}/ping`, {})).json
    )
    expect(ping.type).toBe("endpoint.ping")
    const delivery = await receiver.next((d) => d.id === ping.id)
    expect(delivery.signature.split(" ")).toHaveLength(2)
    expect(verified(next, delivery)).toMatchObject({ id: ping.id })
    expect(verified(secret, delivery)).toMatchObject({ id: ping.id })
    secret = next
  })
})

describe("events of every resource", () => {
  let user: `0x${string}`
  let secret: string

  it.beforeAll(async ({ partner }) => {
    secret = (await register(partner, {
      url: receiver.url,
      events: ["payout.expired", "kyc.approved", "swap.confirmed", "swap.expired"]
    })).secret
    user = await partner.approvedUser()
  })

  const byType = (type: string, match: (object: Record<string, unknown>) => boolean) => (d: Delivery) =>
    d.event.type === type && match(d.event.data.object) && d.signature.split(" ").length === 1 && (() => {
      try {
        verified(secret, d)
        return true
      } catch {
        return false
      }
    })()

  it("kyc.approved when a customer's KYC is approved", async () => {
    const delivery = await receiver.next(byType("kyc.approved", (o) => o["userAddress"] === user))
    expect(delivery.event.data.object).toMatchObject({ userAddress: user, kycStatus: "approved" })
  })

  it("payout.expired when the deposit window passes (the expiry sweep writes it)", async ({ server, partner }) => {
    const payout = await partner.payout(user)
    await expirePayoutWindow(server, payout.payoutId)
    const delivery = await receiver.next(byType("payout.expired", (o) => o["payoutId"] === payout.payoutId))
    expect(delivery.event.data.object).toMatchObject({ status: "expired" })
  })

  it("swap.confirmed and swap.expired", async ({ server, partner }) => {
    const prepare = async () => {
      const wire = await partner.post(`${API}/swaps`, {
        userAddress: user,
        fromToken: "USDC",
        toToken: "COPm",
        amountIn: "10"
      })
      expect(wire.status, wire.text).toBe(201)
      return (wire.json as { intentId: string }).intentId
    }
    const confirmedId = await prepare()
    const confirmed = await partner.post(`${API}/swaps/${confirmedId}/confirm`, { txHash: newTxHash() })
    expect(confirmed.status, confirmed.text).toBe(200)
    const delivery = await receiver.next(byType("swap.confirmed", (o) => o["intentId"] === confirmedId))
    expect(delivery.event.data.object).toEqual(confirmed.json)

    const expiringId = await prepare()
    await sql(
      server,
      (q) => q`UPDATE swap_intents SET expires_at = now() - interval '1 minute' WHERE id = ${expiringId} RETURNING id`
    )
    const expired = await receiver.next(byType("swap.expired", (o) => o["intentId"] === expiringId))
    expect(expired.event.data.object).toMatchObject({ status: "expired" })
  })
})

describe("the outbox", () => {
  it("a state change and its event commit or roll back together", async ({ server, partner }) => {
    const user = await partner.approvedUser()
    const payout = await partner.payout(user)
    const [row] = await sql<{ provider_transfer_id: string }>(
      server,
      (q) => q`SELECT provider_transfer_id FROM payouts WHERE id = ${payout.payoutId}`
    )
    const moveThenFail = Effect.gen(function*() {
      const lifecycle = yield* Lifecycle
      yield* lifecycle.applyTransferProgress({
        progress: bridgeProgress({ id: row!.provider_transfer_id, state: "error" }),
        source: "provider_webhook"
      })
      return yield* Effect.fail("rolled back")
    })
    const outcome = await runApp(
      server,
      Effect.flatMap(SqlClient.SqlClient, (q) => q.withTransaction(moveThenFail)).pipe(Effect.flip)
    )
    expect(outcome).toBe("rolled back")
    const events = async () =>
      (await sql<{ type: string }>(
        server,
        (q) => q`SELECT type FROM events WHERE resource_id = ${payout.payoutId} ORDER BY id`
      ))
        .map((e) => e.type)
    expect((await partner.getPayout(payout.payoutId)).json).toMatchObject({ status: "awaiting_deposit" })
    expect(await events()).toEqual(["payout.created"])

    await advance(partner, payout.payoutId, "failed")
    expect(await events()).toEqual(["payout.created", "payout.failed"])
  })
})
