/**
 * GET /swaps filters (issue #31): `status` and `createdTo`, combined with `createdFrom` and cursor pages; a filtered
 * list's cursor continues that list only; another integration's swaps are never listed; bad values are a 400 naming
 * the field.
 */
import { SwapIntent, SwapList } from "@cop-integrations/contracts"
import { Schema } from "effect"
import { describe, expect } from "vitest"
import { httpTest } from "../support/fixture.ts"
import {
  byCreatedThenId,
  expectBadRequest,
  newAddress,
  newPartner,
  newTxHash,
  pageAll,
  type Partner
} from "../support/flows.ts"

const SWAPS = "/api/integrations/swaps"
const API = "/api/integrations"

const it = httpTest()

const made: Array<SwapIntent> = []
let theirs: SwapIntent

const prepare = async (who: Partner, amountIn: string) => {
  const wire = await who.post(SWAPS, { userAddress: newAddress(), fromToken: "USDC", toToken: "COPm", amountIn })
  expect(wire.status, wire.text).toBe(201)
  return Schema.decodeUnknownSync(SwapIntent)(wire.json)
}

it.beforeAll(async ({ server, partner }) => {
  for (let i = 0; i < 7; i++) {
    const swap = await prepare(partner, `${10 + i}`)
    made.push(swap)
    if (i % 3 === 1) {
      const wire = await partner.post(`${SWAPS}/${swap.intentId}/confirm`, { txHash: newTxHash() })
      expect(wire.status, wire.text).toBe(200)
    }
    if (i % 3 === 2) {
      const wire = await partner.post(`${API}/test-helpers/swaps/${swap.intentId}/expire`, {})
      expect(wire.status, wire.text).toBe(200)
    }
  }
  const neighbour = await newPartner(server)
  theirs = await prepare(neighbour, "11")
})

const current = async (partner: Partner) => {
  const swaps = await Promise.all(made.map(async ({ intentId }) => {
    const wire = await partner.get(`${SWAPS}/${intentId}`)
    expect(wire.status, wire.text).toBe(200)
    return Schema.decodeUnknownSync(SwapIntent)(wire.json)
  }))
  return swaps.sort(byCreatedThenId((swap) => swap.intentId))
}

const ids = (swaps: ReadonlyArray<SwapIntent>) => swaps.map((swap) => swap.intentId)

const list = async (who: Partner, query: Record<string, string>) => {
  const wire = await who.get(SWAPS, query)
  expect(wire.status, wire.text).toBe(200)
  return Schema.decodeUnknownSync(SwapList)(wire.json)
}

const walk = (who: Partner, query: Record<string, string>, limit: number) =>
  pageAll(query, limit, (page) => list(who, page))

describe("GET /swaps with filters", () => {
  it("status, createdTo and createdFrom combine, over cursor pages of every size", async ({ partner }) => {
    const all = await current(partner)
    expect(new Set(all.map((swap) => swap.status))).toEqual(new Set(["prepared", "confirmed", "expired"]))
    const at = (swap: SwapIntent) => Date.parse(swap.createdAt)
    const cases: ReadonlyArray<[Record<string, string>, (swap: SwapIntent) => boolean]> = [
      [{ status: "prepared" }, (s) => s.status === "prepared"],
      [{ status: "confirmed" }, (s) => s.status === "confirmed"],
      [{ status: "failed" }, () => false],
      [{ createdTo: all[4]!.createdAt }, (s) => at(s) < at(all[4]!)],
      [
        { status: "expired", createdFrom: all[1]!.createdAt, createdTo: all[6]!.createdAt },
        (s) => s.status === "expired" && at(s) >= at(all[1]!) && at(s) < at(all[6]!)
      ]
    ]
    for (const [query, holds] of cases) {
      const expected = ids(all.filter(holds))
      for (const limit of [1, 2, 500]) {
        const listed = await walk(partner, query, limit)
        expect(ids(listed), `${JSON.stringify(query)} limit ${limit}`).toEqual(expected)
        expect(ids(listed)).not.toContain(theirs.intentId)
      }
    }
  })

  it("a filtered list's cursor continues that list only", async ({ partner }) => {
    const first = await list(partner, { status: "prepared", limit: "1" })
    expect(first.nextCursor).not.toBeNull()
    expect((await list(partner, { status: "prepared", limit: "1", cursor: first.nextCursor! })).items).toHaveLength(1)
    for (const query of [{ status: "expired" }, {}]) {
      expectBadRequest(await partner.get(SWAPS, { ...query, cursor: first.nextCursor! }), "cursor")
    }
  })

  it("refuses bad filter values with a 400 naming the field", async ({ partner }) => {
    for (const status of ["awaiting_deposit", "PREPARED", ""]) {
      expectBadRequest(await partner.get(SWAPS, { status }), "status")
    }
    for (const createdTo of ["tomorrow", "2026-13-01T00:00:00Z"]) {
      expectBadRequest(await partner.get(SWAPS, { createdTo }), "createdTo")
    }
    expectBadRequest(
      await partner.get(SWAPS, { createdFrom: "2026-11-22T00:00:00Z", createdTo: "2026-11-21T00:00:00Z" }),
      "createdTo"
    )
  })
})
