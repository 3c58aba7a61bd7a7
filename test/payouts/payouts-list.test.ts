import type { Payout } from "@cop-integrations/contracts"
import { describe, expect } from "vitest"
import { httpTest } from "../support/fixture.ts"
import {
  byCreatedThenId,
  decodePayoutList,
  expectBadRequest,
  newPartner,
  pagesOf,
  type Partner,
  PAYOUTS,
  sql
} from "../support/flows.ts"
import { withClient } from "../support/server.ts"

/** The fixture's `partner` owns exactly `SEVEN` payouts. */
const it = httpTest()
/** Another integration with payouts of its own. */
let neighbour: Partner
let mine: ReadonlyArray<Payout>
let theirs: ReadonlyArray<Payout>
const SEVEN = 7

const createSome = async (owner: Partner, count: number) => {
  const user = await owner.approvedUser()
  const created: Array<Payout> = []
  for (let i = 0; i < count; i++) created.push(await owner.payout(user, { destinationCop: `${10000 + i}` }))
  return created
}

it.beforeAll(async ({ server, partner }) => {
  neighbour = await newPartner(server)
  // interleave the two integrations in time
  const [a, b] = await Promise.all([createSome(partner, SEVEN), createSome(neighbour, 3)])
  mine = a
  theirs = b
})

const list = async (owner: Partner, query: Record<string, string> = {}) => {
  const wire = await owner.get(PAYOUTS, query)
  expect(wire.status, wire.text).toBe(200)
  return decodePayoutList(wire.json)
}

const inListOrder = byCreatedThenId((payout: Payout) => payout.payoutId)

const ids = (payouts: ReadonlyArray<Payout>) => payouts.map((p) => p.payoutId)

const walkPages = (owner: Partner, limit: number, query: Record<string, string> = {}) =>
  pagesOf(query, limit, (page) => list(owner, page))

describe("GET /payouts", () => {
  it("lists only the caller's payouts, in createdAt then payoutId order", async ({ partner }) => {
    const page = await list(partner)
    expect(page.integrationId).toBe(partner.integrationId)
    expect(page.nextCursor).toBeNull()
    expect(ids(page.items).sort()).toEqual(ids(mine).sort())
    expect(ids(page.items)).toEqual(ids([...page.items].sort(inListOrder)))
    expect(page.items).toEqual([...mine].sort(inListOrder))

    const other = await list(neighbour)
    expect(other.integrationId).toBe(neighbour.integrationId)
    expect(ids(other.items).sort()).toEqual(ids(theirs).sort())
  })

  it("shows an integration without payouts an empty list", async ({ server }) => {
    const fresh = await newPartner(server)
    expect(await list(fresh)).toEqual({ integrationId: fresh.integrationId, items: [], nextCursor: null })
  })

  it("filters on createdFrom inclusively, to the millisecond", async ({ partner }) => {
    const all = (await list(partner)).items
    for (const boundary of [all[0]!, all[3]!, all[all.length - 1]!]) {
      const at = Date.parse(boundary.createdAt)
      const from = await list(partner, { createdFrom: boundary.createdAt })
      expect(ids(from.items)).toContain(boundary.payoutId)
      expect(ids(from.items)).toEqual(ids(all.filter((p) => Date.parse(p.createdAt) >= at)))
      const after = await list(partner, { createdFrom: new Date(at + 1).toISOString() })
      expect(ids(after.items)).not.toContain(boundary.payoutId)
      expect(ids(after.items)).toEqual(ids(all.filter((p) => Date.parse(p.createdAt) > at)))
    }
  })

  it("accepts createdFrom with a time-zone offset", async ({ partner }) => {
    const all = (await list(partner)).items
    const boundary = all[2]!
    const at = Date.parse(boundary.createdAt)
    // the same instant, written five hours behind UTC
    const local = new Date(at - 5 * 3600_000).toISOString().replace("Z", "-05:00")
    expect(Date.parse(local)).toBe(at)
    expect(ids((await list(partner, { createdFrom: local })).items)).toEqual(
      ids(all.filter((p) => Date.parse(p.createdAt) >= at))
    )
  })

  it("enforces 1 <= limit <= 500", async ({ partner }) => {
    for (const limit of ["0", "501", "abc", "-1", "1.5", ""]) {
      expectBadRequest(await partner.get(PAYOUTS, { limit }), "limit")
    }
    const one = await list(partner, { limit: "1" })
    expect(one.items).toHaveLength(1)
    expect(one.nextCursor).not.toBeNull()
    const max = await list(partner, { limit: "500" })
    expect(max.items).toHaveLength(SEVEN)
    expect(max.nextCursor).toBeNull()
  })

  it("paginates with limit 2 over every payout exactly once", async ({ partner }) => {
    const pages = await walkPages(partner, 2)
    expect(pages.map((page) => page.length)).toEqual([2, 2, 2, 1])
    const visited = pages.flat()
    expect(new Set(ids(visited)).size).toBe(visited.length)
    expect(ids(visited)).toEqual(ids([...mine].sort(inListOrder)))
  })

  it("paginates an exact multiple of the page size and combines with createdFrom", async ({ partner }) => {
    const all = (await list(partner)).items
    const from = all[1]!.createdAt
    const expected = ids(all.filter((p) => Date.parse(p.createdAt) >= Date.parse(from)))
    for (const limit of [1, 3, expected.length]) {
      const visited = (await walkPages(partner, limit, { createdFrom: from })).flat()
      expect(ids(visited)).toEqual(expected)
    }
  })

  it("breaks createdAt ties by payoutId, also across page boundaries", async ({ server }) => {
    const tied = await newPartner(server)
    const created = await createSome(tied, 5)
    // three payouts share one createdAt (to the millisecond)
    const shared = new Date(Date.parse(created[1]!.createdAt))
    const tiedIds = ids(created.slice(1, 4))
    await sql(server, (q) => q`UPDATE payouts SET created_at = ${shared} WHERE id IN ${q.in(tiedIds)} RETURNING id`)
    const all = (await list(tied)).items
    expect(all.filter((p) => p.createdAt === shared.toISOString()).map((p) => p.payoutId)).toEqual([...tiedIds].sort())
    expect(ids(all)).toEqual(ids([...all].sort(inListOrder)))
    for (const limit of [1, 2]) {
      expect(ids((await walkPages(tied, limit)).flat())).toEqual(ids(all))
    }
    const from = await list(tied, { createdFrom: shared.toISOString() })
    expect(ids(from.items)).toEqual(ids(all.filter((p) => Date.parse(p.createdAt) >= shared.getTime())))
    expect(ids(from.items)).toEqual(expect.arrayContaining(tiedIds))
  })

  it("rejects a garbage cursor and a malformed createdFrom with 400", async ({ partner }) => {
    for (
      const cursor of ["garbage", "eyJ0IjoxfQ", Buffer.from("{\"t\":\"nope\",\"id\":\"x\"}").toString("base64url")]
    ) {
      expectBadRequest(await partner.get(PAYOUTS, { cursor }), "cursor")
    }
    for (const createdFrom of ["yesterday", "2026-13-45T00:00:00Z", "2026-01-01", "1700000000000", ""]) {
      expectBadRequest(await partner.get(PAYOUTS, { createdFrom }), "createdFrom")
    }
  })

  it("does not leak another integration's payouts through its cursor", async ({ partner }) => {
    const first = await list(neighbour, { limit: "1" })
    expect(first.nextCursor).not.toBeNull()
    const page = await list(partner, { cursor: first.nextCursor! })
    for (const payout of page.items) expect(ids(mine)).toContain(payout.payoutId)
  })

  it("works through the typed client", async ({ server, partner }) => {
    const page = await withClient(
      server.baseUrl,
      partner.apiKey,
      (client) => client.breb.listPayouts({ query: { limit: 3 } })
    )
    expect(page.integrationId).toBe(partner.integrationId)
    expect(ids(page.items)).toEqual(ids([...mine].sort(inListOrder)).slice(0, 3))
    expect(page.nextCursor).not.toBeNull()
  })
})
