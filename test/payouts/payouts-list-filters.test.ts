/**
 * GET /payouts filters (issue #31, the dashboard's payouts view): `status`, `createdTo` (exclusive; with createdFrom a
 * range), `txHash` (the deposit or fee transaction a payout was confirmed with) and `breBKeyLast4`. They combine with
 * AND and with cursor pages; a filtered list's cursor continues that list only; another integration's payouts are
 * never listed, whatever the filter; bad values are a 400 naming the field. Expected lists are computed here from each
 * payout as `GET payouts/{payoutId}` answers it.
 */
import { type Payout, PayoutStatus } from "@cop-integrations/contracts"
import { describe, expect } from "vitest"
import { httpTest } from "../support/fixture.ts"
import {
  byCreatedThenId,
  decodePayout,
  decodePayoutList,
  expectBadRequest,
  newPartner,
  newTxHash,
  pageAll,
  type Partner,
  PAYOUTS,
  upperHex
} from "../support/flows.ts"
import { withClient } from "../support/server.ts"

const API = "/api/integrations"

// The mock provider leaves payouts where the test puts them.
const it = httpTest({ env: { MOCK_LIFECYCLE_DELAY_MS: "3600000" } })

let neighbour: Partner
/** The neighbour's payout: same key ending, confirmed with its own hash. */
let theirs: Payout
let neighbourHash: string
let neighbourFeeHash: string
/** Each of the partner's payouts as created, by name. */
const made: Record<string, Payout> = {}
/** The hashes the partner confirmed with, by payout name. */
const hashes: Record<string, { txHash: string; feeTxHash?: string }> = {}

const advance = async (who: Partner, payoutId: string, to: string) => {
  const wire = await who.post(`${API}/test-helpers/payouts/${payoutId}/advance`, { to })
  expect(wire.status, wire.text).toBe(200)
}

const confirm = async (who: Partner, payoutId: string, body: { txHash: string; feeTxHash?: string }) => {
  const wire = await who.confirm(payoutId, body)
  expect(wire.status, wire.text).toBe(200)
}

/** name, Bre-B key, what happens to it after creation */
const PLAN: ReadonlyArray<readonly [string, string, "none" | "confirm" | "completed" | "failed" | "expired"]> = [
  ["a", "@maria2024", "none"],
  ["b", "3001234567", "confirm"],
  ["c", "@ana2024", "completed"],
  ["d", "maria@example.COM", "failed"],
  ["e", "@maria2024", "completed"],
  ["f", "@luis2024", "none"],
  ["g", "3009994567", "expired"],
  ["h", "@maria2024", "completed"]
]

it.beforeAll(async ({ server, partner, user }) => {
  for (const [name, breBKey, then] of PLAN) {
    const payout = await partner.payout(user, { breBKey })
    made[name] = payout
    if (then === "confirm" || then === "completed" || then === "failed") {
      hashes[name] = name === "c" ? { txHash: newTxHash(), feeTxHash: newTxHash() } : { txHash: newTxHash() }
      await confirm(partner, payout.payoutId, hashes[name])
    }
    if (then === "completed" || then === "failed") await advance(partner, payout.payoutId, then)
    if (then === "expired") {
      const wire = await partner.post(`${API}/test-helpers/payouts/${payout.payoutId}/expire`, {})
      expect(wire.status, wire.text).toBe(200)
    }
  }
  neighbour = await newPartner(server)
  const neighbourUser = await neighbour.approvedUser()
  theirs = await neighbour.payout(neighbourUser, { breBKey: "@maria2024" })
  neighbourHash = newTxHash()
  neighbourFeeHash = newTxHash()
  await confirm(neighbour, theirs.payoutId, { txHash: neighbourHash, feeTxHash: neighbourFeeHash })
  await advance(neighbour, theirs.payoutId, "completed")
})

/** Every payout of the partner as it is now, in the documented order. */
const current = async (partner: Partner): Promise<ReadonlyArray<Payout>> => {
  const payouts = await Promise.all(
    Object.values(made).map(async ({ payoutId }) => {
      const wire = await partner.getPayout(payoutId)
      expect(wire.status, wire.text).toBe(200)
      return decodePayout(wire.json)
    })
  )
  return payouts.sort(byCreatedThenId((payout) => payout.payoutId))
}

const ids = (payouts: ReadonlyArray<Payout>) => payouts.map((payout) => payout.payoutId)

const list = async (who: Partner, query: Record<string, string>) => {
  const wire = await who.get(PAYOUTS, query)
  expect(wire.status, wire.text).toBe(200)
  return decodePayoutList(wire.json)
}

/** Every page of a filtered list, following nextCursor (with the same filters) to the end. */
const walk = (who: Partner, query: Record<string, string>, limit: number) =>
  pageAll(query, limit, (page) => list(who, page))

describe("GET /payouts with filters", () => {
  it("status: only the payouts in that status when the page is read, in order", async ({ partner }) => {
    const all = await current(partner)
    expect(new Set(all.map((payout) => payout.status))).toEqual(
      new Set(["awaiting_deposit", "deposit_confirmed", "completed", "failed", "expired"])
    )
    for (const status of PayoutStatus.literals) {
      const expected = ids(all.filter((payout) => payout.status === status))
      expect(ids((await list(partner, { status })).items), status).toEqual(expected)
      expect(ids(await walk(partner, { status }, 1)), `${status}, one a page`).toEqual(expected)
    }
    // The neighbour's completed payout is never the partner's.
    expect(ids((await list(partner, { status: "completed" })).items)).not.toContain(theirs.payoutId)
  })

  it("createdTo: exclusive, to the millisecond; with createdFrom a half-open range", async ({ partner }) => {
    const all = await current(partner)
    const at = (payout: Payout) => Date.parse(payout.createdAt)
    for (const boundary of [all[0]!, all[3]!, all[all.length - 1]!]) {
      const before = await list(partner, { createdTo: boundary.createdAt })
      expect(ids(before.items)).toEqual(ids(all.filter((payout) => at(payout) < at(boundary))))
      const through = await list(partner, { createdTo: new Date(at(boundary) + 1).toISOString() })
      expect(ids(through.items)).toEqual(ids(all.filter((payout) => at(payout) <= at(boundary))))
    }
    const [from, to] = [all[2]!, all[6]!]
    const range = { createdFrom: from.createdAt, createdTo: to.createdAt }
    const expected = ids(all.filter((payout) => at(payout) >= at(from) && at(payout) < at(to)))
    expect(expected.length).toBeGreaterThanOrEqual(1)
    for (const limit of [1, 2, 500]) expect(ids(await walk(partner, range, limit))).toEqual(expected)
    // The same instant in another offset is the same bound.
    const local = new Date(at(to) - 5 * 3600_000).toISOString().replace("Z", "-05:00")
    expect(ids((await list(partner, { createdFrom: from.createdAt, createdTo: local })).items)).toEqual(expected)
  })

  it("txHash: the payout confirmed with it, by its deposit or fee hash, in any letter case", async ({ partner }) => {
    const all = await current(partner)
    const b = all.find((payout) => payout.payoutId === made["b"]!.payoutId)!
    expect(b.txHash).toBe(hashes["b"]!.txHash)
    expect(ids((await list(partner, { txHash: hashes["b"]!.txHash })).items)).toEqual([made["b"]!.payoutId])
    expect(ids((await list(partner, { txHash: upperHex(hashes["b"]!.txHash) })).items)).toEqual([made["b"]!.payoutId])
    expect(ids((await list(partner, { txHash: hashes["c"]!.feeTxHash! })).items)).toEqual([made["c"]!.payoutId])
    expect((await list(partner, { txHash: newTxHash() })).items).toEqual([])
    // Another integration's payout is not found by its hashes.
    expect((await list(partner, { txHash: neighbourHash })).items).toEqual([])
    expect((await list(partner, { txHash: neighbourFeeHash })).items).toEqual([])
    expect(ids((await list(neighbour, { txHash: neighbourHash })).items)).toEqual([theirs.payoutId])
    expect(ids((await list(neighbour, { txHash: neighbourFeeHash })).items)).toEqual([theirs.payoutId])
    // Combined: the hash's payout only when the other filters hold too.
    expect((await list(partner, { txHash: hashes["b"]!.txHash, status: "completed" })).items).toEqual([])
    expect(ids((await list(partner, { txHash: hashes["b"]!.txHash, status: "deposit_confirmed" })).items))
      .toEqual([made["b"]!.payoutId])
  })

  it("breBKeyLast4: the payouts to a key ending so, in any letter case, as the receipt shows it", async ({ partner }) => {
    const all = await current(partner)
    for (const last4 of ["2024", "4567", ".com", ".COM", "xyz9"]) {
      const expected = ids(all.filter((payout) => payout.receipt.breBKeyLast4?.toLowerCase() === last4.toLowerCase()))
      expect(ids((await list(partner, { breBKeyLast4: last4 })).items), last4).toEqual(expected)
    }
    expect(ids((await list(partner, { breBKeyLast4: "2024" })).items)).toEqual(
      ids(all.filter((payout) => ["a", "c", "e", "f", "h"].some((name) => made[name]!.payoutId === payout.payoutId)))
    )
    expect(ids((await list(neighbour, { breBKeyLast4: "2024" })).items)).toEqual([theirs.payoutId])
  })

  it("filters combine with AND, and with cursor pages of every size", async ({ partner }) => {
    const all = await current(partner)
    const at = (payout: Payout) => Date.parse(payout.createdAt)
    const cases: ReadonlyArray<[Record<string, string>, (payout: Payout) => boolean]> = [
      [
        { status: "completed", breBKeyLast4: "2024" },
        (p) => p.status === "completed" && p.receipt.breBKeyLast4 === "2024"
      ],
      [
        { breBKeyLast4: "2024", createdFrom: all[1]!.createdAt, createdTo: all[7]!.createdAt },
        (p) => p.receipt.breBKeyLast4 === "2024" && at(p) >= at(all[1]!) && at(p) < at(all[7]!)
      ],
      [
        { status: "awaiting_deposit", createdTo: all[7]!.createdAt },
        (p) => p.status === "awaiting_deposit" && at(p) < at(all[7]!)
      ],
      [{ status: "completed", breBKeyLast4: "4567" }, () => false]
    ]
    for (const [query, holds] of cases) {
      const expected = ids(all.filter(holds))
      for (const limit of [1, 2, 3, 500]) {
        expect(ids(await walk(partner, query, limit)), `${JSON.stringify(query)} limit ${limit}`).toEqual(expected)
      }
    }
  })

  it("a filtered list's cursor continues that list only; an unfiltered one's works as before", async ({ partner }) => {
    const all = await current(partner)
    const first = await list(partner, { status: "completed", limit: "1" })
    const cursor = first.nextCursor!
    expect(cursor).not.toBeNull()
    // With the same filters it goes on.
    const next = await list(partner, { status: "completed", limit: "1", cursor })
    expect(next.items[0]?.payoutId).not.toBe(first.items[0]?.payoutId)
    // With others, or none, or another createdFrom, it is refused.
    for (
      const query of [
        { status: "failed" },
        {},
        { status: "completed", breBKeyLast4: "2024" },
        { status: "completed", createdFrom: all[0]!.createdAt },
        { breBKeyLast4: "2024" }
      ]
    ) {
      expectBadRequest(await partner.get(PAYOUTS, { ...query, cursor }), "cursor")
    }
    // An unfiltered list's cursor is refused with a new filter ...
    const plain = await list(partner, { limit: "2" })
    expectBadRequest(await partner.get(PAYOUTS, { status: "completed", cursor: plain.nextCursor! }), "cursor")
    expectBadRequest(await partner.get(PAYOUTS, { createdTo: all[7]!.createdAt, cursor: plain.nextCursor! }), "cursor")
    // ... and keeps working without one, with any createdFrom, as it always did.
    const rest = await list(partner, { cursor: plain.nextCursor!, createdFrom: all[0]!.createdAt })
    expect(ids(rest.items)).toEqual(ids(all).slice(2))
  })

  it("refuses bad filter values with a 400 naming the field", async ({ partner }) => {
    for (const status of ["done", "COMPLETED", "", "completed,failed"]) {
      expectBadRequest(await partner.get(PAYOUTS, { status }), "status")
    }
    for (const createdTo of ["yesterday", "2026-02-30T00:00:00Z", "2026-01-01", ""]) {
      expectBadRequest(await partner.get(PAYOUTS, { createdTo }), "createdTo")
    }
    const at = "2026-11-22T03:19:32.123Z"
    expectBadRequest(await partner.get(PAYOUTS, { createdFrom: at, createdTo: at }), "createdTo")
    expectBadRequest(
      await partner.get(PAYOUTS, { createdFrom: at, createdTo: "2026-11-22T03:19:32.122Z" }),
      "createdTo"
    )
    for (const txHash of ["0x1234", "", `0x${"z".repeat(64)}`, newTxHash().slice(2)]) {
      expectBadRequest(await partner.get(PAYOUTS, { txHash }), "txHash")
    }
    for (const breBKeyLast4 of ["", "202", "20245", "20 4", "ñ024", "20\t4"]) {
      expectBadRequest(await partner.get(PAYOUTS, { breBKeyLast4 }), "breBKeyLast4")
    }
  })

  it("works through the typed client", async ({ server, partner }) => {
    const all = await current(partner)
    const page = await withClient(
      server.baseUrl,
      partner.apiKey,
      (client) => client.breb.listPayouts({ query: { status: "completed", breBKeyLast4: "2024" } })
    )
    expect(ids(page.items)).toEqual(
      ids(all.filter((payout) => payout.status === "completed" && payout.receipt.breBKeyLast4 === "2024"))
    )
  })
})
