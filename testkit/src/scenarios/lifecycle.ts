import type { Payout, PayoutStatus } from "@cop-integrations/contracts"
import { Effect } from "effect"
import { ok, rejected } from "../api.ts"
import { check, checkTimestamps, pollUntil } from "../check.ts"
import { show } from "../failure.ts"
import { confirmPayout, preparedPayout, randomTxHash } from "../fixtures.ts"
import type { Answered } from "../http.ts"
import { type Kit, scenario } from "../scenario.ts"

const FORWARD: ReadonlyArray<PayoutStatus> = ["awaiting_deposit", "deposit_confirmed", "processing", "completed"]

const LIFECYCLE_RULE = "mock mode moves a confirmed payout to processing, then completed, only ever forward"

interface Observed {
  readonly payout: Payout
  readonly exchange: Answered
  readonly statuses: ReadonlyArray<PayoutStatus>
}

/** Polls the payout until it is completed (or the scenario's time is up), keeping every status seen. */
const untilCompleted = (kit: Kit, payoutId: string, seenAtConfirm: PayoutStatus) => {
  const statuses: Array<PayoutStatus> = [seenAtConfirm]
  const observe = Effect.flatMap(
    kit.call("getPayout", { path: { payoutId } }),
    (reply) =>
      Effect.map(ok(reply, "200 with the payout"), (payout): Observed => {
        if (statuses.at(-1) !== payout.status) statuses.push(payout.status)
        return { payout, exchange: reply.exchange, statuses }
      })
  )
  return pollUntil(
    kit,
    {
      rule: LIFECYCLE_RULE,
      expected: "status completed within the scenario's time (--timeout)",
      intervalMs: 150,
      describe: (last) => `statuses seen: ${last.statuses.join(" → ")}`,
      exchange: (last) => last.exchange
    },
    observe,
    (observed) => observed.payout.status === "completed" || !FORWARD.includes(observed.payout.status)
  )
}

const checkForwardOnly = (observed: Observed) => {
  const ranks = observed.statuses.map((status) => FORWARD.indexOf(status))
  const forward = ranks.every((rank, index) => rank >= 0 && (index === 0 || rank > (ranks[index - 1] ?? -1)))
  return check(forward && observed.payout.status === "completed", LIFECYCLE_RULE, {
    expected: "deposit_confirmed → processing → completed, never backwards",
    actual: observed.statuses.join(" → "),
    exchange: observed.exchange
  })
}

const confirmedAndCompleted = (kit: Kit, feeTxHash: string | undefined) =>
  Effect.gen(function*() {
    const payout = yield* preparedPayout(kit)
    const txHash = randomTxHash()
    const confirmed = yield* confirmPayout(
      kit,
      payout.payoutId,
      feeTxHash === undefined ? { txHash } : { txHash, feeTxHash }
    )
    const observed = yield* untilCompleted(kit, payout.payoutId, confirmed.status)
    yield* checkForwardOnly(observed)
    return { ...observed, txHash }
  })

const TIMELINE_RULE = "a mock payout's timeline has each hop, in order, with who reported it"

/** The hops a payout confirmed by the partner and completed by mock mode's provider has, in order. */
const MOCK_HOPS = [
  "created:api",
  "deposit_mined:mock_chain",
  "deposit_confirmed:api",
  "funds_received:mock_provider",
  "processing:mock_provider",
  "completed:mock_provider"
]

const checkTimeline = (observed: Observed) =>
  Effect.gen(function*() {
    const { exchange, payout } = observed
    const hops = payout.timeline.map((hop) => `${hop.status}:${hop.source}`)
    yield* check(hops.join(" → ") === MOCK_HOPS.join(" → "), TIMELINE_RULE, {
      expected: MOCK_HOPS.join(" → "),
      actual: hops.join(" → "),
      exchange
    })
    const times = payout.timeline.map((hop) => Date.parse(hop.at))
    yield* check(
      times.every((time, index) => index === 0 || time >= times[index - 1]!),
      "the timeline is ordered by `at`",
      {
        expected: "each hop's `at` at or after the one before",
        actual: payout.timeline.map((hop) => `${hop.status}@${hop.at}`).join(", "),
        exchange
      }
    )
    const first = payout.timeline[0]
    const last = payout.timeline.at(-1)
    yield* check(
      first?.at === payout.createdAt && last?.at === payout.receipt.completedAt,
      "the timeline starts at the payout's creation and ends when it completed",
      {
        expected: `created at ${payout.createdAt}, completed at ${payout.receipt.completedAt}`,
        actual: `${first?.status}@${first?.at}, ${last?.status}@${last?.at}`,
        exchange
      }
    )
  })

export const lifecycleScenarios = [
  scenario({
    id: "LIFECYCLE-001",
    title: "a confirmed payout reaches completed on its own; the receipt completes, provider and fee legs verify",
    rules: ["R-LIFECYCLE-1"],
    tags: ["lifecycle", "payout", "slow"],
    requires: { mock: true, moneyMoving: true },
    run: (kit) =>
      Effect.gen(function*() {
        const bystander = yield* preparedPayout(kit)
        const { exchange, payout } = yield* confirmedAndCompleted(kit, randomTxHash())
        kit.note("completedAfterMs", Date.parse(payout.updatedAt) - Date.parse(payout.createdAt))
        yield* check(
          payout.receipt.status === "completed" && payout.receipt.completedAt !== null,
          "the receipt of a completed payout is completed",
          {
            expected: "receipt.status completed with completedAt",
            actual: show({ status: payout.receipt.status, completedAt: payout.receipt.completedAt }),
            exchange
          }
        )
        yield* checkTimestamps("timestamps are ISO 8601 UTC with milliseconds", {
          completedAt: payout.receipt.completedAt
        }, exchange)
        yield* check(
          payout.fees.every((leg) => leg.status === "verified"),
          "once the provider settles its legs are verified; copby is verified by the mock at confirmation",
          {
            expected: "every leg verified",
            actual: payout.fees.map((leg) => `${leg.code}:${leg.status}`).join(", "),
            exchange
          }
        )
        const reply = yield* kit.call("getPayout", { path: { payoutId: bystander.payoutId } })
        const untouched = yield* ok(reply, "the unconfirmed payout")
        yield* check(untouched.status === "awaiting_deposit", "only a confirmed payout moves", {
          expected: `${bystander.payoutId} still awaiting_deposit`,
          actual: untouched.status,
          exchange: reply.exchange
        })
      })
  }),
  scenario({
    id: "LIFECYCLE-002",
    title: "a completed payout stays completed: the same txHash answers it unchanged, another is 409",
    rules: ["R-LIFECYCLE-1", "R-CONFIRM-2", "R-CONFIRM-3"],
    tags: ["lifecycle", "confirm", "slow"],
    requires: { mock: true, moneyMoving: true },
    run: (kit) =>
      Effect.gen(function*() {
        const { payout, txHash } = yield* confirmedAndCompleted(kit, undefined)
        const same = yield* kit.call("confirmPayout", { path: { payoutId: payout.payoutId }, json: { txHash } })
        const again = yield* ok(same, "200: confirming again with the same hash")
        yield* check(again.status === "completed", "a late confirmation never moves a payout back", {
          expected: "status completed",
          actual: again.status,
          exchange: same.exchange
        })
        const other = yield* kit.call("confirmPayout", {
          path: { payoutId: payout.payoutId },
          json: { txHash: randomTxHash() }
        })
        yield* rejected(other, 409, undefined, "a completed payout takes no other txHash")
      })
  }),
  scenario({
    id: "LIFECYCLE-003",
    title: "a payout's timeline: every hop of a mock lifecycle, in order, with who reported it",
    rules: ["R-PAYOUT-9", "R-LIFECYCLE-1"],
    tags: ["lifecycle", "payout", "timeline", "slow"],
    requires: { mock: true, moneyMoving: true },
    run: (kit) =>
      Effect.gen(function*() {
        const { exchange, payout, statuses } = yield* confirmedAndCompleted(kit, undefined)
        kit.note("timelineHops", payout.timeline.length)
        yield* checkTimeline({ exchange, payout, statuses })
      })
  })
]
