/**
 * The sandbox rehearses every exception (R-SANDBOX-1 to R-SANDBOX-3, mock mode): a failure with its documented reason,
 * a refund, the time helpers (deposit window, delay, swap quote) and one event of every type on request.
 */
import { type Event, EventType, FAILURE_CODES, type KnownFailureCode } from "@cop-integrations/contracts"
import { Effect } from "effect"
import { ok, rejected } from "../api.ts"
import { check, checkEqual } from "../check.ts"
import { show } from "../failure.ts"
import { approvedUser, confirmPayout, createPayout, payoutRequest, randomTxHash } from "../fixtures.ts"
import { type Kit, scenario } from "../scenario.ts"

const FAILURE_RULE = "a payout's `failure` is its code's row of the documented table (category, retryable, message)"
const REFUND_RULE = "a refunded payout carries `refund`: what went back to the depositor, and its status"
const TIME_RULE = "a time helper answers the resource in its new state, its event in `GET events`"
const TRIGGER_RULE = "the trigger answers one event of the type asked for, which `GET events/{eventId}` reads"

const sandbox = { mock: true, moneyMoving: true } as const

const newPayout = (kit: Kit) => Effect.flatMap(approvedUser(kit), (user) => createPayout(kit, payoutRequest(user)))

const depositedPayout = (kit: Kit) =>
  Effect.flatMap(newPayout(kit), (payout) => confirmPayout(kit, payout.payoutId, { txHash: randomTxHash() }))

const advance = (kit: Kit, payoutId: string, json: Record<string, unknown>) =>
  kit.call("advancePayout", { path: { payoutId }, json })

/** The event of `type` about resource `id` (its `payoutId` or `intentId`) in `GET events` from `createdFrom` on. */
const listedEvent = (kit: Kit, type: EventType, id: string, createdFrom: string) =>
  Effect.gen(function*() {
    let cursor: string | null = null
    for (let page = 0; page < 20; page++) {
      const query: Record<string, string> = cursor === null
        ? { type, createdFrom, limit: "100" }
        : { cursor, limit: "100" }
      const list = yield* ok(yield* kit.call("listEvents", { query }))
      const found = list.items.find((event: Event) => {
        const object = event.data.object as { payoutId?: string; intentId?: string }
        return object.payoutId === id || object.intentId === id
      })
      if (found !== undefined) return found
      cursor = list.nextCursor
      if (cursor === null) break
    }
    return undefined
  })

const checkListed = (kit: Kit, type: EventType, id: string, createdFrom: string) =>
  Effect.flatMap(
    listedEvent(kit, type, id, createdFrom),
    (found) =>
      check(found !== undefined, TIME_RULE, { expected: `a ${type} event about ${id}`, actual: "none in GET events" })
  )

/**
 * A deposited payout advanced `to` a failing status with `failureCode`, checked to carry that status, code and the
 * code's category; `answered` names the 200.
 */
const failedWith = (kit: Kit, to: "failed" | "refunded", failureCode: KnownFailureCode, answered: string) =>
  Effect.gen(function*() {
    const payout = yield* depositedPayout(kit)
    const advanced = yield* ok(yield* advance(kit, payout.payoutId, { to, failureCode }), answered)
    yield* checkEqual(FAILURE_RULE, [advanced.status, advanced.failure?.code, advanced.failure?.category], [
      to,
      failureCode,
      FAILURE_CODES[failureCode].category
    ])
    return advanced
  })

export const sandboxScenarios = [
  scenario({
    id: "SBX-001",
    title: "advance to failed with a failureCode: the payout's failure is that code's row; a bad code or to is one 400",
    rules: ["R-SANDBOX-1"],
    tags: ["test-helpers", "failures"],
    requires: sandbox,
    run: (kit) =>
      Effect.gen(function*() {
        const failed = yield* failedWith(kit, "failed", "beneficiary_name_mismatch", "200 with the failed payout")
        const { message, retryable } = FAILURE_CODES.beneficiary_name_mismatch
        yield* checkEqual(FAILURE_RULE, [failed.failure?.retryable, failed.failure?.message], [retryable, message])

        const other = yield* depositedPayout(kit)
        for (
          const [json, field] of [
            [{ to: "failed", failureCode: "not_a_documented_code" }, "failureCode"],
            [{ to: "expired" }, "to"]
          ] as const
        ) {
          const error = yield* rejected(yield* advance(kit, other.payoutId, json), 400, "none", `an invalid ${field}`)
          yield* check(error.error.includes(field), "a 400 names the field", {
            expected: `a message naming ${field}`,
            actual: error.error
          })
        }
      })
  }),
  scenario({
    id: "SBX-002",
    title: "advance to refunded with a failureCode: the failure, and the refund to the depositor",
    rules: ["R-SANDBOX-1"],
    tags: ["test-helpers", "failures"],
    requires: sandbox,
    run: (kit) =>
      Effect.gen(function*() {
        const refunded = yield* failedWith(kit, "refunded", "deposit_short", "200 with the refunded payout")
        yield* check(refunded.refund !== null, REFUND_RULE, { expected: "a refund", actual: show(refunded.refund) })
        yield* checkEqual(REFUND_RULE, refunded.refund?.to, refunded.userAddress)
      })
  }),
  scenario({
    id: "SBX-003",
    title: "time helpers: payout.expired, payout.delayed and swap.expired on request",
    rules: ["R-SANDBOX-2"],
    tags: ["test-helpers", "events", "swaps"],
    requires: sandbox,
    run: (kit) =>
      Effect.gen(function*() {
        const awaiting = yield* newPayout(kit)
        const expired = yield* ok(yield* kit.call("expirePayout", { path: { payoutId: awaiting.payoutId } }))
        yield* checkEqual(TIME_RULE, expired.status, "expired")
        yield* checkListed(kit, "payout.expired", awaiting.payoutId, awaiting.createdAt)

        const inFlight = yield* depositedPayout(kit)
        const delayed = yield* ok(yield* kit.call("delayPayout", { path: { payoutId: inFlight.payoutId } }))
        yield* check(delayed.timeline.some((hop) => hop.status === "delayed"), TIME_RULE, {
          expected: "a delayed hop",
          actual: show(delayed.timeline)
        })
        yield* checkListed(kit, "payout.delayed", inFlight.payoutId, inFlight.createdAt)

        const userAddress = yield* approvedUser(kit)
        const swap = yield* ok(
          yield* kit.call("prepareSwap", {
            json: { userAddress, fromToken: "USDC", toToken: "COPm", amountIn: "10" },
            headers: {}
          }),
          "201 with a prepared swap"
        )
        const swapExpired = yield* ok(yield* kit.call("expireSwap", { path: { intentId: swap.intentId } }))
        yield* checkEqual(TIME_RULE, swapExpired.status, "expired")
        yield* checkListed(kit, "swap.expired", swap.intentId, swap.createdAt)
      })
  }),
  scenario({
    id: "SBX-004",
    title: "trigger: one event of every type (endpoint.ping aside), each read back with its type",
    rules: ["R-SANDBOX-3"],
    tags: ["test-helpers", "events"],
    requires: sandbox,
    run: (kit) =>
      Effect.forEach(
        EventType.literals.filter((type) => type !== "endpoint.ping"),
        (type) =>
          Effect.gen(function*() {
            const triggered = yield* ok(yield* kit.call("triggerEvent", { json: { type } }), `an event of ${type}`)
            yield* checkEqual(TRIGGER_RULE, triggered.type, type)
            const event = yield* ok(yield* kit.call("getEvent", { path: { eventId: triggered.eventId } }))
            yield* checkEqual(TRIGGER_RULE, [event.id, event.type], [triggered.eventId, type])
          }),
        { discard: true }
      )
  })
]
