/**
 * GET /events?resourceId= (issue #31, a payout's page lists its events): the events of one payout, swap, KYC customer
 * or endpoint, in the order they were recorded (the resource's `sequence` order), combined with `type`, `createdFrom`
 * and cursor pages; a filtered list's cursor continues that list only; another integration's resource lists nothing;
 * bad values are a 400 naming `resourceId`.
 */
import { type Event, EventList } from "@cop-integrations/contracts"
import { Schema } from "effect"
import { describe, expect } from "vitest"
import { httpTest } from "../support/fixture.ts"
import { expectBadRequest, newPartner, newTxHash, pageAll, type Partner } from "../support/flows.ts"

const API = "/api/integrations"
const EVENTS = `${API}/events`

const it = httpTest({ env: { MOCK_LIFECYCLE_DELAY_MS: "3600000" } })

let completed: string
let fresh: string
let theirs: string
let neighbour: Partner
let endpointId: string

it.beforeAll(async ({ server, partner, user }) => {
  const one = await partner.payout(user)
  const two = await partner.payout(user)
  completed = one.payoutId
  fresh = two.payoutId
  expect((await partner.confirm(completed, { txHash: newTxHash() })).status).toBe(200)
  const advanced = await partner.post(`${API}/test-helpers/payouts/${completed}/advance`, { to: "completed" })
  expect(advanced.status, advanced.text).toBe(200)
  const endpoint = await partner.post(`${API}/webhook-endpoints`, { url: "http://127.0.0.1:9/hooks" })
  expect(endpoint.status, endpoint.text).toBe(201)
  endpointId = (endpoint.json as { endpointId: string }).endpointId
  for (let i = 0; i < 3; i++) {
    const ping = await partner.post(`${API}/webhook-endpoints/${endpointId}/ping`, {})
    expect(ping.status, ping.text).toBe(202)
  }
  neighbour = await newPartner(server)
  theirs = (await neighbour.payout(await neighbour.approvedUser())).payoutId
})

const list = async (who: Partner, query: Record<string, string>) => {
  const wire = await who.get(EVENTS, query)
  expect(wire.status, wire.text).toBe(200)
  return Schema.decodeUnknownSync(EventList)(wire.json)
}

const walk = (who: Partner, query: Record<string, string>, limit: number) =>
  pageAll(query, limit, (page) => list(who, page))

/** The id of what an event is about: its object's own id field. */
const resourceOf = (event: Event): string => {
  const object = event.data.object as Record<string, string | undefined>
  return object["payoutId"] ?? object["intentId"] ?? object["endpointId"] ?? String(object["userAddress"]).toLowerCase()
}

const ids = (events: ReadonlyArray<Event>) => events.map((event) => event.id)

describe("GET /events?resourceId=", () => {
  it("lists one resource's events, in sequence order, as the whole list has them", async ({ partner, user }) => {
    const everything = await walk(partner, {}, 500)
    const resources = [completed, fresh, endpointId, user.toLowerCase()]
    for (const resourceId of resources) {
      const expected = everything.filter((event) => resourceOf(event) === resourceId)
      expect(expected.length, resourceId).toBeGreaterThanOrEqual(1)
      for (const limit of [1, 2, 500]) {
        const listed = await walk(partner, { resourceId }, limit)
        expect(ids(listed), `${resourceId} limit ${limit}`).toEqual(ids(expected))
        expect(listed.map((event) => event.sequence)).toEqual(listed.map((_, i) => i + 1))
      }
    }
    expect((await list(partner, { resourceId: completed })).items.map((event) => event.type)).toEqual([
      "payout.created",
      "payout.deposit_confirmed",
      "payout.completed"
    ])
  })

  it("takes a customer's address in any letter case", async ({ partner, user }) => {
    const lower = await list(partner, { resourceId: user.toLowerCase() })
    expect(lower.items.map((event) => event.type)).toContain("kyc.approved")
    expect(ids((await list(partner, { resourceId: user })).items)).toEqual(ids(lower.items))
    expect(ids((await list(partner, { resourceId: `0x${user.slice(2).toUpperCase()}` })).items)).toEqual(
      ids(lower.items)
    )
  })

  it("combines with type and createdFrom (all must hold)", async ({ partner }) => {
    const all = await list(partner, { resourceId: completed })
    const typed = await list(partner, { resourceId: completed, type: "payout.completed" })
    expect(typed.items.map((event) => event.type)).toEqual(["payout.completed"])
    expect((await list(partner, { resourceId: fresh, type: "payout.completed" })).items).toEqual([])
    const from = all.items[2]!.createdAt
    expect(ids(await walk(partner, { resourceId: completed, createdFrom: from }, 1))).toEqual(
      ids(all.items.filter((event) => Date.parse(event.createdAt) >= Date.parse(from)))
    )
    const pings = await walk(partner, { resourceId: endpointId, type: "endpoint.ping" }, 2)
    expect(pings).toHaveLength(3)
  })

  it("lists nothing of another integration's resource, and never another's events", async ({ partner }) => {
    // Listed by its owner (which numbers its events): they exist, and are listable.
    expect((await list(neighbour, { resourceId: theirs })).items.map((event) => event.type)).toEqual(["payout.created"])
    expect(await list(partner, { resourceId: theirs })).toMatchObject({ items: [], nextCursor: null })
    expect((await list(partner, { resourceId: "po_doesnotexist" })).items).toEqual([])
  })

  it("a resource's cursor continues that list only; an unfiltered one's works as before", async ({ partner }) => {
    const first = await list(partner, { resourceId: completed, limit: "1" })
    const cursor = first.nextCursor!
    expect(cursor).not.toBeNull()
    expect((await list(partner, { resourceId: completed, limit: "1", cursor })).items[0]?.sequence).toBe(2)
    for (
      const query of [
        { resourceId: fresh },
        {},
        { resourceId: completed, type: "payout.completed" },
        { type: "payout.created" }
      ]
    ) {
      expectBadRequest(await partner.get(EVENTS, { ...query, cursor }), "cursor")
    }
    const plain = await list(partner, { limit: "1" })
    expectBadRequest(await partner.get(EVENTS, { resourceId: completed, cursor: plain.nextCursor! }), "cursor")
    // Without resourceId a cursor goes on with any type, as it always did.
    expect((await list(partner, { type: "payout.completed", cursor: plain.nextCursor! })).items.length).toBe(1)
  })

  it("refuses a bad resourceId with a 400 naming it", async ({ partner }) => {
    for (const resourceId of ["", "p".repeat(65), "po_\n1", "po_\u0000"]) {
      expectBadRequest(await partner.get(EVENTS, { resourceId }), "resourceId")
    }
  })
})
