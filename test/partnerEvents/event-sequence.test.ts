/**
 * `sequence` in the event envelope, over HTTP: a payout's events are numbered 1, 2, 3 … in `GET events`,
 * `GET events/{id}` and the bytes delivered to a receiver; each resource (the payout, the customer, the endpoint)
 * counts on its own; two transitions of one payout racing (two test-helper advances at once) still leave the
 * numbers unique and gap-free.
 */
import { Event, EventList, EventWithAttempts, WebhookEndpointWithSecret } from "@cop-integrations/contracts"
import { Schema } from "effect"
import { describe, expect } from "vitest"
import { httpTest } from "../support/fixture.ts"
import { newTxHash, pageAll, type Partner } from "../support/flows.ts"
import { type Delivery, type Receiver, startReceiver } from "../support/webhookReceiver.ts"

const API = "/api/integrations"

const it = httpTest({ env: { MOCK_LIFECYCLE_DELAY_MS: "3600000", WEBHOOK_RETRY_BASE_MS: "20" } })

let receiver: Receiver
let endpointId: string

it.beforeAll(async ({ partner }) => {
  receiver = await startReceiver()
  const created = await partner.post(`${API}/webhook-endpoints`, { url: receiver.url })
  expect(created.status, created.text).toBe(201)
  endpointId = Schema.decodeUnknownSync(WebhookEndpointWithSecret)(created.json).endpointId
})
it.afterAll(() => receiver?.close())

/** Every event of the integration, through the list's pages, decoded by the contract. */
const allEvents = (partner: Partner) =>
  pageAll({}, 100, async (query) => {
    const wire = await partner.get(`${API}/events`, query)
    expect(wire.status, wire.text).toBe(200)
    return Schema.decodeUnknownSync(EventList)(wire.json)
  })

const resourceOf = (event: { readonly type: string; readonly data: { readonly object: unknown } }) => {
  const object = event.data.object as Record<string, string>
  return object["payoutId"] ?? object["endpointId"] ?? object["userAddress"]
}

const sequenceOf = (delivery: Delivery) => (JSON.parse(delivery.body) as { sequence: number }).sequence

describe("event sequence", () => {
  it("numbers a payout's events 1, 2, 3 … in GET events, GET events/{id} and the delivered bytes", async ({ partner }) => {
    const user = await partner.approvedUser()
    const payout = await partner.payout(user)
    const confirmed = await partner.confirm(payout.payoutId, { txHash: newTxHash() })
    expect(confirmed.status, confirmed.text).toBe(200)
    for (const to of ["processing", "completed"]) {
      const advanced = await partner.post(`${API}/test-helpers/payouts/${payout.payoutId}/advance`, { to })
      expect(advanced.status, advanced.text).toBe(200)
    }

    const listed = (await allEvents(partner)).filter((event) => resourceOf(event) === payout.payoutId)
    expect(listed.map((event) => [event.sequence, event.type])).toEqual([
      [1, "payout.created"],
      [2, "payout.deposit_confirmed"],
      [3, "payout.processing"],
      [4, "payout.completed"]
    ])
    // the customer counts on its own
    const customer = (await allEvents(partner)).filter((event) => resourceOf(event) === user)
    expect(customer.map((event) => [event.sequence, event.type])).toEqual([[1, "kyc.approved"]])

    const last = listed[3]!
    const detail = await partner.get(`${API}/events/${last.id}`)
    expect(detail.status, detail.text).toBe(200)
    expect(Schema.decodeUnknownSync(EventWithAttempts)(detail.json).sequence).toBe(4)
    expect(Object.keys(detail.json as object)).toEqual(["id", "type", "createdAt", "sequence", "data", "attempts"])

    const delivered = await receiver.count((delivery) => resourceOf(delivery.event) === payout.payoutId, 4)
    expect(delivered.map((delivery) => [sequenceOf(delivery), delivery.event.type])).toEqual(
      listed.map((event) => [event.sequence, event.type])
    )
    for (const delivery of delivered) {
      expect(Schema.decodeUnknownSync(Event)(JSON.parse(delivery.body)).sequence).toBe(sequenceOf(delivery))
    }
  })

  it("two transitions of one payout racing leave its sequences unique and gap-free", async ({ partner }) => {
    const payout = await partner.payout(await partner.approvedUser())
    const race = await Promise.all(
      ["processing", "failed", "completed"].map((to) =>
        partner.post(`${API}/test-helpers/payouts/${payout.payoutId}/advance`, { to })
      )
    )
    expect(race.some((answer) => answer.status === 200), race.map((answer) => answer.text).join("\n")).toBe(true)
    const sequences = (await allEvents(partner)).filter((event) => resourceOf(event) === payout.payoutId)
      .map((event) => event.sequence)
    expect(sequences.length).toBeGreaterThan(1)
    expect([...sequences].sort((a, b) => a - b)).toEqual(Array.from({ length: sequences.length }, (_, i) => i + 1))
  })

  it("an endpoint's pings are numbered as its own resource, and the ping's answer carries the number", async ({ partner }) => {
    const numbers: Array<number> = []
    for (let i = 0; i < 2; i++) {
      const ping = await partner.post(`${API}/webhook-endpoints/${endpointId}/ping`, {})
      expect(ping.status, ping.text).toBe(202)
      numbers.push(Schema.decodeUnknownSync(Event)(ping.json).sequence)
    }
    expect(numbers).toEqual([1, 2])
  })
})
