import type { Payout } from "@cop-integrations/contracts"
import { Effect } from "effect"
import { ok, type Reply, rejected } from "../api.ts"
import { check, checkEqual, checkNamesField, sameJson } from "../check.ts"
import { show } from "../failure.ts"
import {
  approvedUser,
  approveUnder,
  freshAddress,
  idempotencyKey,
  payoutRequest,
  type PayoutRequest
} from "../fixtures.ts"
import type { Auth } from "../http.ts"
import { type Kit, scenario } from "../scenario.ts"
import { listAll } from "./list.ts"

const createWithKey = (
  kit: Kit,
  request: PayoutRequest | Record<string, unknown>,
  key: string,
  auth: Auth = "primary"
) => kit.call("createPayout", { json: request, headers: { "Idempotency-Key": key }, auth })

const REPLAY_RULE = "the same Idempotency-Key with the same body replays the same payout"

const PARALLEL_RETRIES = 6

/** An approved user's payout created under a fresh Idempotency-Key: the key, the request and the 201 body. */
const createdUnderKey = (kit: Kit) =>
  Effect.gen(function*() {
    const key = idempotencyKey()
    const request = payoutRequest(yield* approvedUser(kit))
    const first = yield* ok(yield* createWithKey(kit, request, key), "201 for the first request")
    return { key, request, first }
  })

export const idempotencyScenarios = [
  scenario({
    id: "IDEM-001",
    title:
      "a retry with the same Idempotency-Key and body replays the stored 201 and payout, marked Idempotent-Replayed",
    rules: ["R-IDEM-1"],
    tags: ["idempotency", "payout"],
    requires: { mock: true, moneyMoving: true },
    run: (kit) =>
      Effect.gen(function*() {
        const { first, key, request } = yield* createdUnderKey(kit)
        const again = yield* createWithKey(kit, request, key)
        const replayed = yield* ok(again, "the replay of the first 201")
        yield* check(sameJson(replayed, first), REPLAY_RULE, {
          expected: `the first response again (payoutId ${first.payoutId})`,
          actual: `payoutId ${replayed.payoutId}: ${show(replayed)}`,
          exchange: again.exchange
        })
        yield* checkEqual(
          "a replay is marked with Idempotent-Replayed: true",
          again.exchange.response.headers["idempotent-replayed"],
          "true",
          again.exchange
        )
      })
  }),
  scenario({
    id: "IDEM-002",
    title: "the same Idempotency-Key with a different body is 422, before any other check, and changes nothing",
    rules: ["R-IDEM-2"],
    tags: ["idempotency", "payout", "errors"],
    requires: { mock: true, moneyMoving: true },
    run: (kit) =>
      Effect.gen(function*() {
        const { first, key, request } = yield* createdUnderKey(kit)
        for (const changed of [{ ...request, destinationCop: "200000" }, payoutRequest(freshAddress())]) {
          yield* rejected(
            yield* createWithKey(kit, changed, key),
            422,
            "none",
            "a changed body under a used key is 422"
          )
        }
        const reply = yield* kit.call("getPayout", { path: { payoutId: first.payoutId } })
        const stored = yield* ok(reply, "the first payout")
        yield* checkEqual("the first payout is unchanged", stored.destinationCop, first.destinationCop, reply.exchange)
      })
  }),
  scenario({
    id: "IDEM-003",
    title: "parallel retries with one Idempotency-Key create exactly one payout",
    rules: ["R-IDEM-3"],
    tags: ["idempotency", "payout", "concurrency"],
    requires: { mock: true, moneyMoving: true },
    run: (kit) =>
      Effect.gen(function*() {
        const key = idempotencyKey()
        const request = payoutRequest(yield* approvedUser(kit))
        const replies: ReadonlyArray<Reply<Payout>> = yield* Effect.all(
          Array.from({ length: PARALLEL_RETRIES }, () => createWithKey(kit, request, key)),
          { concurrency: "unbounded" }
        )
        const created = replies.flatMap((reply) => (reply._tag === "Success" ? [reply.value.payoutId] : []))
        const unexpected = replies.find((reply) =>
          reply._tag === "Rejected" && !(reply.status === 409 && reply.error.errorCode === undefined)
        )
        yield* check(unexpected === undefined && created.length > 0, REPLAY_RULE, {
          expected:
            `${PARALLEL_RETRIES} answers 201 (a duplicate may wait and replay; 409 only if the first took > 10 s)`,
          actual: replies.map((reply) => reply.status).join(", "),
          exchange: unexpected?.exchange
        })
        yield* check(new Set(created).size === 1, "every parallel retry answers the same payout", {
          expected: "one payoutId",
          actual: [...new Set(created)].join(", "),
          exchange: replies[0]?.exchange
        })
        const earliest = Math.min(
          ...replies.flatMap((reply) => (reply._tag === "Success" ? [Date.parse(reply.value.createdAt)] : []))
        )
        const items = yield* listAll(kit, { createdFrom: new Date(earliest - 60_000).toISOString() })
        const mine = items.filter((payout) => payout.userAddress === request.userAddress)
        yield* check(mine.length === 1, "exactly one payout exists for the key", {
          expected: "1 payout for this userAddress in the list",
          actual: `${mine.length}: ${mine.map((payout) => payout.payoutId).join(", ")}`
        })
      })
  }),
  scenario({
    id: "IDEM-004",
    title: "Idempotency-Keys are scoped per integration: the same key under another key's integration is a new payout",
    rules: ["R-IDEM-4"],
    tags: ["idempotency", "payout", "isolation"],
    requires: { mock: true, moneyMoving: true, secondKey: true },
    run: (kit) =>
      Effect.gen(function*() {
        const key = idempotencyKey()
        const user = yield* approvedUser(kit)
        yield* approveUnder(kit, user, "second")
        const request = payoutRequest(user)
        const mine = yield* ok(yield* createWithKey(kit, request, key), "201 under the first integration")
        const reply = yield* createWithKey(kit, request, key, "second")
        const theirs = yield* ok(reply, "201 under the second integration: its own payout, not a replay")
        yield* check(theirs.payoutId !== mine.payoutId, "another integration never gets this integration's payout", {
          expected: `a payoutId other than ${mine.payoutId}`,
          actual: theirs.payoutId,
          exchange: reply.exchange
        })
      })
  }),
  scenario({
    id: "IDEM-005",
    title: "a request rejected by validation or a transient error does not use up its Idempotency-Key",
    rules: ["R-IDEM-5"],
    tags: ["idempotency", "payout"],
    requires: { mock: true, moneyMoving: true },
    run: (kit) =>
      Effect.gen(function*() {
        const key = idempotencyKey()
        const request = payoutRequest(yield* approvedUser(kit))
        yield* rejected(
          yield* createWithKey(kit, { ...request, breBKey: "not a key" }, key),
          400,
          "none",
          "an invalid body is 400"
        )
        const unavailable = yield* kit.call("createPayout", {
          json: request,
          headers: { "Idempotency-Key": key, "X-Mock-Scenario": "provider_unavailable" }
        })
        yield* rejected(unavailable, 503, "none", "an unavailable provider is 503")
        yield* ok(yield* createWithKey(kit, request, key), "201: neither the 400 nor the 503 was stored under the key")
      })
  }),
  scenario({
    id: "IDEM-006",
    title: "an Idempotency-Key of 255 characters is accepted, a longer one is 400",
    rules: ["R-IDEM-6"],
    tags: ["idempotency", "payout", "limits"],
    requires: { mock: true, moneyMoving: true },
    run: (kit) =>
      Effect.gen(function*() {
        const user = yield* approvedUser(kit)
        const base = idempotencyKey()
        yield* ok(yield* createWithKey(kit, payoutRequest(user), base.padEnd(255, "k")), "201 with a 255-character key")
        const reply = yield* createWithKey(kit, payoutRequest(user), base.padEnd(256, "k"))
        const error = yield* rejected(reply, 400, "none", "a 256-character key is 400")
        yield* checkNamesField(
          "the 400 names the header",
          { error: error.error.toLowerCase() },
          "idempotency-key",
          reply.exchange
        )
      })
  }),
  scenario({
    id: "IDEM-007",
    title: "the same body with its fields in another order is the same request: replayed",
    rules: ["R-IDEM-1"],
    tags: ["idempotency", "payout"],
    requires: { mock: true, moneyMoving: true },
    run: (kit) =>
      Effect.gen(function*() {
        const { first, key, request } = yield* createdUnderKey(kit)
        const reordered = `{ "accountOwnerName": ${JSON.stringify(request.accountOwnerName)},\n  "breBKey": ${
          JSON.stringify(request.breBKey)
        }, "destinationCop": ${JSON.stringify(request.destinationCop)}, "userAddress": ${
          JSON.stringify(request.userAddress)
        } }`
        const again = yield* kit.call("createPayout", {
          body: reordered,
          headers: { "Content-Type": "application/json", "Idempotency-Key": key }
        })
        const replayed = yield* ok(again, "the replay: a reordered body is the same request, not a 422")
        yield* checkEqual(REPLAY_RULE, replayed.payoutId, first.payoutId, again.exchange)
      })
  })
]
