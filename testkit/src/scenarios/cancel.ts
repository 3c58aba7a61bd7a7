import type { Payout } from "@cop-integrations/contracts"
import { Effect } from "effect"
import { ok, rejected } from "../api.ts"
import { check } from "../check.ts"
import { confirmPayout, preparedPayout, randomTxHash } from "../fixtures.ts"
import { type Kit, scenario } from "../scenario.ts"

const cancel = (kit: Kit, payoutId: string) => kit.call("cancelPayout", { path: { payoutId } })

const canceled = (kit: Kit, payoutId: string) =>
  Effect.flatMap(cancel(kit, payoutId), (reply) => ok(reply, "200 with the canceled payout"))

const CANCEL_RULE = "a cancel expires a payout awaiting its deposit now, with an expired hop from api; again, the same"
const LATE_FUNDS_RULE = "funds returned after a cancel: refunded with failure.code deposit_after_cancel and its refund"

export const cancelScenarios = [
  scenario({
    id: "CANCEL-001",
    title:
      "cancel a payout awaiting its deposit: expired now, an expired hop from api; again the same payout; a confirm after it is requote",
    rules: ["R-CANCEL-1"],
    tags: ["payout", "cancel"],
    requires: { mock: true, moneyMoving: true },
    run: (kit) =>
      Effect.gen(function*() {
        const payout = yield* preparedPayout(kit)
        const first = yield* canceled(kit, payout.payoutId)
        yield* check(first.status === "expired", CANCEL_RULE, { expected: "status expired", actual: first.status })
        yield* check(Date.parse(first.expiresAt) < Date.parse(payout.expiresAt), CANCEL_RULE, {
          expected: `expiresAt before the window's end (${payout.expiresAt})`,
          actual: first.expiresAt
        })
        const last = first.timeline.at(-1)
        yield* check(last?.status === "expired" && last.source === "api", CANCEL_RULE, {
          expected: "the last hop expired from api",
          actual: JSON.stringify(last)
        })
        const again = yield* canceled(kit, payout.payoutId)
        yield* check(JSON.stringify(again) === JSON.stringify(first), CANCEL_RULE, {
          expected: "the same payout, unchanged",
          actual: JSON.stringify(again)
        })
        yield* rejected(
          yield* kit.call("confirmPayout", { path: { payoutId: payout.payoutId }, json: { txHash: randomTxHash() } }),
          409,
          "requote",
          "a confirm after a cancel answers as after an expiry"
        )
      })
  }),
  scenario({
    id: "CANCEL-002",
    title: "a payout whose deposit is confirmed cannot be canceled: 409 without errorCode, the payout untouched",
    rules: ["R-CANCEL-2"],
    tags: ["payout", "cancel"],
    requires: { mock: true, moneyMoving: true },
    run: (kit) =>
      Effect.gen(function*() {
        const payout = yield* preparedPayout(kit)
        const confirmed = yield* confirmPayout(kit, payout.payoutId, { txHash: randomTxHash() })
        yield* rejected(yield* cancel(kit, payout.payoutId), 409, "none", "a cancel after the deposit is refused")
        const after = yield* Effect.flatMap(
          kit.call("getPayout", { path: { payoutId: payout.payoutId } }),
          (reply) => ok(reply, "200 with the payout")
        )
        yield* check(
          after.status !== "expired" && after.txHash === confirmed.txHash,
          "a refused cancel changes nothing",
          {
            expected: `status not expired, txHash ${confirmed.txHash}`,
            actual: `${after.status}, ${after.txHash}`
          }
        )
      })
  }),
  scenario({
    id: "CANCEL-003",
    title:
      "funds the provider returns after a cancel: refunded with deposit_after_cancel and a refund to the user's wallet",
    rules: ["R-CANCEL-3", "R-FAILURE-1"],
    tags: ["payout", "cancel", "failure"],
    requires: { mock: true, moneyMoving: true },
    run: (kit) =>
      Effect.gen(function*() {
        const payout = yield* preparedPayout(kit)
        yield* canceled(kit, payout.payoutId)
        const refunded: Payout = yield* Effect.flatMap(
          kit.call("advancePayout", { path: { payoutId: payout.payoutId }, json: { to: "refunded" } }),
          (reply) => ok(reply, "200 with the refunded payout")
        )
        yield* check(
          refunded.status === "refunded" && refunded.failure?.code === "deposit_after_cancel" &&
            refunded.failure.category === "deposit",
          LATE_FUNDS_RULE,
          { expected: "refunded, failure deposit_after_cancel (deposit)", actual: JSON.stringify(refunded.failure) }
        )
        yield* check(
          refunded.refund !== null && refunded.refund.to === payout.userAddress && refunded.refund.token === "USDC",
          LATE_FUNDS_RULE,
          { expected: `a USDC refund to ${payout.userAddress}`, actual: JSON.stringify(refunded.refund) }
        )
        yield* check(
          !refunded.timeline.some((hop) => hop.status === "deposit_confirmed"),
          LATE_FUNDS_RULE,
          { expected: "no deposit_confirmed hop", actual: refunded.timeline.map((hop) => hop.status).join(" → ") }
        )
      })
  })
]
