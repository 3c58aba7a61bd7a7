import type { Payout, PayoutList } from "@cop-integrations/contracts"
import { Effect } from "effect"
import { ok, rejected } from "../api.ts"
import { check, checkNamesField } from "../check.ts"
import { failure, type ScenarioFailure } from "../failure.ts"
import {
  approvedUser,
  confirmPayout,
  createPayout,
  freshAddress,
  payoutRequest,
  randomTxHash,
  uniqueSuffix
} from "../fixtures.ts"
import type { Answered, Auth } from "../http.ts"
import { type Kit, scenario } from "../scenario.ts"

export interface Page {
  readonly value: PayoutList
  readonly exchange: Answered
}

const MAX_PAGES = 200

const listPage = (kit: Kit, query: Readonly<Record<string, string>>, auth: Auth = "primary") =>
  Effect.flatMap(
    kit.call("listPayouts", { query, auth }),
    (reply) => Effect.map(ok(reply, "200 PayoutList"), (value): Page => ({ value, exchange: reply.exchange }))
  )

/** Every page of a listing, following nextCursor to the end. */
export const listPages = (
  kit: Kit,
  query: { readonly createdFrom: string; readonly limit?: number },
  auth: Auth = "primary"
): Effect.Effect<ReadonlyArray<Page>, ScenarioFailure> =>
  Effect.gen(function*() {
    const base = {
      createdFrom: query.createdFrom,
      ...(query.limit === undefined ? {} : { limit: String(query.limit) })
    }
    const pages: Array<Page> = []
    let cursor: string | null = null
    do {
      const page: Page = yield* listPage(kit, cursor === null ? base : { ...base, cursor }, auth)
      pages.push(page)
      cursor = page.value.nextCursor
      if (pages.length >= MAX_PAGES) {
        return yield* Effect.fail(
          failure("pagination ends: nextCursor is null on the last page", {
            expected: `the last page within ${MAX_PAGES} pages`,
            actual: `still a nextCursor after ${MAX_PAGES} pages`,
            exchange: page.exchange
          })
        )
      }
    } while (cursor !== null)
    return pages
  })

export const listAll = (
  kit: Kit,
  query: { readonly createdFrom: string; readonly limit?: number },
  auth: Auth = "primary"
) => Effect.map(listPages(kit, query, auth), (pages) => pages.flatMap((page) => page.value.items))

const ORDER_RULE = "payouts are listed by createdAt ascending, then payoutId"

/** (createdAt, payoutId) order; ids compare by their bytes (they are ASCII). */
const inOrder = (before: Payout, after: Payout): boolean => {
  const [a, b] = [Date.parse(before.createdAt), Date.parse(after.createdAt)]
  return a < b || (a === b && before.payoutId < after.payoutId)
}

const checkAscending = (items: ReadonlyArray<Payout>, exchange?: Answered) =>
  Effect.forEach(items.slice(1), (item, index) => {
    const before = items[index]!
    return check(inOrder(before, item), ORDER_RULE, {
      expected: "items in (createdAt, payoutId) ascending order",
      actual: `${before.payoutId} (${before.createdAt}) is listed before ${item.payoutId} (${item.createdAt})`,
      exchange
    })
  }, { discard: true })

/** Three payouts of one user, created one after the other. */
const threePayouts = (kit: Kit) =>
  Effect.gen(function*() {
    const user = yield* approvedUser(kit)
    const made: Array<Payout> = []
    for (let i = 0; i < 3; i++) made.push(yield* createPayout(kit, payoutRequest(user)))
    return made
  })

const ids = (items: ReadonlyArray<Payout>) => items.map((item) => item.payoutId)

const withOffset = (iso: string): string => {
  const shifted = new Date(Date.parse(iso) + 5.5 * 3_600_000).toISOString()
  return `${shifted.slice(0, -1)}+05:30`
}

/** Every item of a payouts list with these filters, paged `limit` at a time (the first page's exchange as evidence). */
const filteredPayouts = (kit: Kit, query: Readonly<Record<string, string>>, limit: number) =>
  Effect.gen(function*() {
    const items: Array<Payout> = []
    let cursor: string | null = null
    let exchange: Answered | undefined
    for (let pages = 0; pages < MAX_PAGES; pages++) {
      const page: Page = yield* listPage(kit, {
        ...query,
        limit: String(limit),
        ...(cursor === null ? {} : { cursor })
      })
      exchange ??= page.exchange
      items.push(...page.value.items)
      cursor = page.value.nextCursor
      if (cursor === null) break
    }
    return { items, exchange }
  })

const FILTER_RULE = "filters narrow the list (all must hold), over cursor pages, in (createdAt, payoutId) order"

/** The payouts listed with `query` (paged one by one) are exactly `expected`, in order. */
const listsExactly = (
  kit: Kit,
  query: Readonly<Record<string, string>>,
  expected: ReadonlyArray<Payout>,
  what: string
) =>
  Effect.gen(function*() {
    const { exchange, items } = yield* filteredPayouts(kit, query, 1)
    yield* check(sameIds(ids(items), ids(expected)), FILTER_RULE, {
      expected: `${what}: ${ids(expected).join(", ") || "nothing"}`,
      actual: `listed with ${JSON.stringify(query)}: ${ids(items).join(", ") || "nothing"}`,
      exchange
    })
  })

const sameIds = (a: ReadonlyArray<string>, b: ReadonlyArray<string>) =>
  a.length === b.length && a.every((id, index) => id === b[index])

const byListOrder = (items: ReadonlyArray<Payout>) => [...items].sort((a, b) => (inOrder(a, b) ? -1 : 1))

export const listScenarios = [
  scenario({
    id: "LIST-001",
    title: "the list answers this integration's id, payouts in createdAt order, and a nextCursor",
    rules: ["R-LIST-1"],
    tags: ["list", "read-only"],
    run: (kit) =>
      Effect.gen(function*() {
        const first = yield* listPage(kit, { limit: "20" })
        const second = yield* listPage(kit, { limit: "20" })
        yield* check(
          first.value.integrationId !== "" && first.value.integrationId === second.value.integrationId,
          "integrationId names the caller's integration",
          {
            expected: "the same non-empty integrationId on every call",
            actual: `${first.value.integrationId}, ${second.value.integrationId}`,
            exchange: second.exchange
          }
        )
        yield* checkAscending(first.value.items, first.exchange)
      })
  }),
  scenario({
    id: "LIST-002",
    title: "createdFrom is inclusive and exact at a returned createdAt, in any ISO 8601 offset",
    rules: ["R-LIST-2"],
    tags: ["list"],
    requires: { mock: true, moneyMoving: true },
    run: (kit) =>
      Effect.gen(function*() {
        const [p1, p2, p3] = yield* threePayouts(kit)
        if (p1 === undefined || p2 === undefined || p3 === undefined) return
        const rule = "createdFrom keeps payouts created at or after it, and only those"
        for (const createdFrom of [p2.createdAt, withOffset(p2.createdAt)]) {
          const pages = yield* listPages(kit, { createdFrom })
          const listed = new Set(ids(pages.flatMap((page) => page.value.items)))
          const exchange = pages[0]?.exchange
          yield* check(listed.has(p2.payoutId) && listed.has(p3.payoutId), rule, {
            expected: `createdFrom ${createdFrom} lists ${p2.payoutId} (created exactly then) and ${p3.payoutId}`,
            actual: `listed: ${[...listed].join(", ") || "nothing"}`,
            exchange
          })
          if (p1.createdAt < p2.createdAt) {
            yield* check(!listed.has(p1.payoutId), rule, {
              expected: `${p1.payoutId} (created ${p1.createdAt}) left out`,
              actual: `listed: ${[...listed].join(", ")}`,
              exchange
            })
          }
        }
        const after = new Date(Date.parse(p3.createdAt) + 1).toISOString()
        const later = yield* listPages(kit, { createdFrom: after })
        yield* check(!ids(later.flatMap((page) => page.value.items)).includes(p3.payoutId), rule, {
          expected: `createdFrom ${after} (1 ms after ${p3.payoutId} was created) leaves it out`,
          actual: "it is listed",
          exchange: later[0]?.exchange
        })
      })
  }),
  scenario({
    id: "LIST-003",
    title: "limit takes 1 to 500 (default 50); anything else is 400 naming limit",
    rules: ["R-LIST-2"],
    tags: ["list", "limits", "validation", "read-only"],
    run: (kit) =>
      Effect.gen(function*() {
        for (const [limit, most] of [["1", 1], ["500", 500], [undefined, 50]] as const) {
          const page = yield* listPage(kit, limit === undefined ? {} : { limit })
          yield* check(page.value.items.length <= most, "a page holds at most limit items", {
            expected: `at most ${most} items (limit ${limit ?? "default"})`,
            actual: `${page.value.items.length} items`,
            exchange: page.exchange
          })
        }
        for (const limit of ["0", "501", "-1", "1.5", "ten", ""]) {
          const reply = yield* kit.call("listPayouts", { query: { limit } })
          const error = yield* rejected(reply, 400, "none", `limit ${JSON.stringify(limit)} is outside 1..500`)
          yield* checkNamesField("the 400 names limit", error, "limit", reply.exchange)
        }
      })
  }),
  scenario({
    id: "LIST-004",
    title: "paging with nextCursor returns every payout once: no duplicates, no gaps, in order",
    rules: ["R-LIST-1"],
    tags: ["list", "pagination"],
    requires: { mock: true, moneyMoving: true },
    run: (kit) =>
      Effect.gen(function*() {
        const user = yield* approvedUser(kit)
        const made: Array<Payout> = []
        for (let i = 0; i < 5; i++) made.push(yield* createPayout(kit, payoutRequest(user)))
        const createdFrom = made[0]!.createdAt
        // One page first: everything on it must show up again when paging afterwards.
        const whole = yield* listPage(kit, { createdFrom, limit: "500" })
        const pages = yield* listPages(kit, { createdFrom, limit: 2 })
        const paged = pages.flatMap((page) => page.value.items)
        const evidence = pages.at(-1)?.exchange
        for (const page of pages) {
          yield* check(page.value.items.length <= 2, "a page holds at most limit items", {
            expected: "at most 2 items",
            actual: `${page.value.items.length}`,
            exchange: page.exchange
          })
        }
        const seen = ids(paged)
        const duplicates = seen.filter((id, index) => seen.indexOf(id) !== index)
        yield* check(duplicates.length === 0, "no payout appears on two pages", {
          expected: "each payoutId once",
          actual: `repeated: ${duplicates.join(", ")}`,
          exchange: evidence
        })
        const missing = ids([...made, ...whole.value.items]).filter((id) => !seen.includes(id))
        yield* check(missing.length === 0, "paging leaves no payout out", {
          expected: `every payout since ${createdFrom}, including the 5 just created`,
          actual: `missing from the pages: ${[...new Set(missing)].join(", ")}`,
          exchange: evidence
        })
        yield* checkAscending(paged, evidence)
      })
  }),
  scenario({
    id: "LIST-005",
    title: "a cursor the API did not issue, or a createdFrom that is no ISO 8601 timestamp, is 400",
    rules: ["R-LIST-2"],
    tags: ["list", "validation", "read-only"],
    run: (kit) =>
      Effect.gen(function*() {
        const cases = [
          ["cursor", "not-a-cursor"],
          ["createdFrom", "yesterday"],
          ["createdFrom", "2026-13-45T00:00:00Z"],
          ["createdFrom", "22/11/2026"]
        ] as const
        for (const [name, value] of cases) {
          const reply = yield* kit.call("listPayouts", { query: { [name]: value } })
          const error = yield* rejected(reply, 400, "none", `${name} ${JSON.stringify(value)} is invalid`)
          yield* checkNamesField(`the 400 names ${name}`, error, name, reply.exchange)
        }
      })
  }),
  scenario({
    id: "LIST-006",
    title:
      "payouts filtered by breBKeyLast4, status, txHash and createdTo: exactly the matching ones, over pages of one",
    rules: ["R-LIST-3", "R-LIST-4"],
    tags: ["list", "filters", "pagination"],
    requires: { mock: true, moneyMoving: true },
    run: (kit) =>
      Effect.gen(function*() {
        const user = yield* approvedUser(kit)
        // A key ending this run alone uses (random hex, then letters in both cases), and a payout to another key.
        const key = `@conf${uniqueSuffix()}Qz`
        const last4 = key.slice(-4)
        const swapped = [...last4].map((c) => c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase()).join("")
        const made: Array<Payout> = []
        for (let i = 0; i < 3; i++) made.push(yield* createPayout(kit, payoutRequest(user, { breBKey: key })))
        yield* createPayout(kit, payoutRequest(user))
        const hash = randomTxHash()
        const confirmed = yield* confirmPayout(kit, made[1]!.payoutId, { txHash: hash })
        const createdFrom = made[0]!.createdAt
        const mine = byListOrder(made)

        yield* listsExactly(kit, { createdFrom, breBKeyLast4: swapped }, mine, `the payouts to ${key} (any case)`)
        yield* listsExactly(
          kit,
          { createdFrom, breBKeyLast4: last4, status: "awaiting_deposit" },
          mine.filter((payout) => payout.payoutId !== confirmed.payoutId),
          `the payouts to ${key} still awaiting their deposit`
        )
        yield* listsExactly(
          kit,
          { txHash: `0x${hash.slice(2).toUpperCase()}` },
          [confirmed],
          `the payout confirmed with ${hash} (any letter case)`
        )
        const createdTo = mine[2]!.createdAt
        yield* listsExactly(
          kit,
          { createdFrom, createdTo, breBKeyLast4: last4 },
          mine.filter((payout) => Date.parse(payout.createdAt) < Date.parse(createdTo)),
          `the payouts to ${key} created before ${createdTo} (createdTo is exclusive)`
        )

        // A filtered list's cursor continues that list only.
        const first = yield* listPage(kit, { createdFrom, breBKeyLast4: last4, limit: "1" })
        const cursor = first.value.nextCursor
        yield* check(cursor !== null, FILTER_RULE, {
          expected: "a nextCursor after the first of 3 payouts",
          actual: "null",
          exchange: first.exchange
        })
        for (const other of [{ createdFrom }, { createdFrom, breBKeyLast4: last4, status: "completed" }]) {
          const reply = yield* kit.call("listPayouts", { query: { ...other, cursor: cursor ?? "" } })
          const error = yield* rejected(reply, 400, "none", "a filtered list's cursor is refused with other filters")
          yield* checkNamesField("the 400 names cursor", error, "cursor", reply.exchange)
        }
      })
  }),
  scenario({
    id: "LIST-007",
    title: "an invalid filter value (status, createdTo, txHash, breBKeyLast4, resourceId) is 400 naming it",
    rules: ["R-LIST-4"],
    tags: ["list", "filters", "validation", "read-only"],
    run: (kit) =>
      Effect.gen(function*() {
        const at = "2026-11-22T03:19:32.123Z"
        const cases = [
          ["listPayouts", { status: "done" }, "status"],
          ["listPayouts", { status: "prepared" }, "status"],
          ["listPayouts", { createdTo: "yesterday" }, "createdTo"],
          ["listPayouts", { createdFrom: at, createdTo: at }, "createdTo"],
          ["listPayouts", { txHash: "0x1234" }, "txHash"],
          ["listPayouts", { breBKeyLast4: "123" }, "breBKeyLast4"],
          ["listPayouts", { breBKeyLast4: "12 4" }, "breBKeyLast4"],
          ["listSwaps", { status: "completed" }, "status"],
          ["listSwaps", { createdTo: "2026-02-30T00:00:00Z" }, "createdTo"],
          ["listEvents", { resourceId: "" }, "resourceId"],
          ["listEvents", { resourceId: "r".repeat(65) }, "resourceId"]
        ] as const
        for (const [name, query, field] of cases) {
          const reply = yield* kit.call(name, { query })
          const error = yield* rejected(reply, 400, "none", `${name} with ${JSON.stringify(query)} is invalid`)
          yield* checkNamesField(`the 400 names ${field}`, error, field, reply.exchange)
        }
      })
  }),
  scenario({
    id: "LIST-008",
    title: "swaps filtered by status and createdTo: the expired one, the prepared one, the one created before",
    rules: ["R-LIST-3"],
    tags: ["list", "filters", "swaps", "test-helpers"],
    requires: { mock: true },
    run: (kit) =>
      Effect.gen(function*() {
        const prepareOne = Effect.flatMap(
          kit.call("prepareSwap", {
            json: { userAddress: freshAddress(), fromToken: "USDC", toToken: "COPm", amountIn: "10" },
            headers: {}
          }),
          (reply) => ok(reply, "201 with a prepared swap")
        )
        const first = yield* prepareOne
        const second = yield* prepareOne
        yield* ok(yield* kit.call("expireSwap", { path: { intentId: first.intentId } }), "the swap expired")
        const createdFrom = first.createdAt
        const listed = (query: Readonly<Record<string, string>>) =>
          Effect.flatMap(
            kit.call("listSwaps", { query: { createdFrom, limit: "500", ...query } }),
            (reply) => Effect.map(ok(reply), (page) => ({ ids: page.items.map((swap) => swap.intentId), reply }))
          )
        const cases = [
          [{ status: "expired" }, first.intentId, second.intentId],
          [{ status: "prepared" }, second.intentId, first.intentId]
        ] as const
        for (const [query, inIt, notInIt] of cases) {
          const { ids: found, reply } = yield* listed(query)
          yield* check(found.includes(inIt) && !found.includes(notInIt), "status filters the swaps list", {
            expected: `${inIt} listed with ${JSON.stringify(query)}, ${notInIt} not`,
            actual: found.join(", ") || "nothing",
            exchange: reply.exchange
          })
        }
        if (Date.parse(first.createdAt) < Date.parse(second.createdAt)) {
          const { ids: found, reply } = yield* listed({ createdTo: second.createdAt })
          yield* check(found.includes(first.intentId) && !found.includes(second.intentId), "createdTo is exclusive", {
            expected: `${first.intentId} listed, ${second.intentId} (created at createdTo) not`,
            actual: found.join(", ") || "nothing",
            exchange: reply.exchange
          })
        }
      })
  })
]
