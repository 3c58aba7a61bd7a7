/**
 * Lifecycle's rules for a payout the sweep expired (DESIGN §3, "Funds that arrive late"): the provider's word that
 * money reached it moves the payout forward through `deposit_confirmed`; a transfer that never saw funds (canceled,
 * an error, still awaiting them, a state we do not know) leaves it expired; nothing ever moves a payout back.
 */
import type { PayoutStatus } from "@cop-integrations/contracts"
import { describe, expect, it } from "vitest"
import { acceptsConfirm, moveTo, stepsForProgress } from "../../src/payouts/Lifecycle.ts"
import type { PayoutRow } from "../../src/payouts/PayoutRow.ts"
import { bridgeProgress } from "../../src/provider/bridge/TransferStates.ts"

/** Where a Bridge transfer state takes a payout: its adapter's meaning, then the lifecycle's rules. */
const stepsForTransferState = (from: PayoutStatus, state: string) =>
  stepsForProgress(from, bridgeProgress({ id: "tr_test", state }))

const STATUSES: ReadonlyArray<PayoutStatus> = [
  "awaiting_deposit",
  "deposit_confirmed",
  "processing",
  "completed",
  "failed",
  "refunded",
  "expired"
]
const PROVIDER_STATES = [
  "awaiting_funds",
  "in_review",
  "funds_received",
  "payment_submitted",
  "payment_processed",
  "undeliverable",
  "returned",
  "missing_return_policy",
  "refunded",
  "canceled",
  "error",
  "some_state_added_later"
]

/** Where a status stands on the way forward (side exits after everything they can follow). */
const RANK: Record<PayoutStatus, number> = {
  awaiting_deposit: 0,
  expired: 1,
  deposit_confirmed: 2,
  processing: 3,
  completed: 4,
  failed: 4,
  refunded: 5
}

describe("an expired payout and the provider's transfer states", () => {
  it("moves forward, through deposit_confirmed, on every state that means the funds reached the provider", () => {
    expect(stepsForTransferState("expired", "funds_received")).toEqual(["deposit_confirmed"])
    expect(stepsForTransferState("expired", "payment_submitted")).toEqual(["deposit_confirmed", "processing"])
    expect(stepsForTransferState("expired", "payment_processed")).toEqual(["deposit_confirmed", "completed"])
    // Undeliverable and returned money had arrived first: the payout records the deposit, then the failure or refund.
    expect(stepsForTransferState("expired", "undeliverable")).toEqual(["deposit_confirmed", "failed"])
    expect(stepsForTransferState("expired", "missing_return_policy")).toEqual(["deposit_confirmed", "failed"])
    expect(stepsForTransferState("expired", "returned")).toEqual(["deposit_confirmed", "refunded"])
    expect(stepsForTransferState("expired", "refunded")).toEqual(["deposit_confirmed", "refunded"])
  })

  it("stays expired when no funds came: canceled, error, awaiting funds, in review, or a state it does not know", () => {
    for (const state of ["canceled", "error", "awaiting_funds", "in_review", "some_state_added_later"]) {
      expect(stepsForTransferState("expired", state), state).toEqual([])
    }
  })

  it("a payout still awaiting its deposit keeps its rules (a canceled transfer fails it)", () => {
    expect(stepsForTransferState("awaiting_deposit", "payment_processed")).toEqual(["deposit_confirmed", "completed"])
    expect(stepsForTransferState("awaiting_deposit", "canceled")).toEqual(["failed"])
    expect(stepsForTransferState("awaiting_deposit", "awaiting_funds")).toEqual([])
  })

  it("never moves a payout back, never into expired, and never out of a final state", () => {
    for (const from of STATUSES) {
      for (const state of PROVIDER_STATES) {
        let at = from
        for (const step of stepsForTransferState(from, state)) {
          expect(RANK[step], `${from} --${state}--> ${step}`).toBeGreaterThan(RANK[at])
          at = step
        }
        expect(stepsForTransferState(from, state)).not.toContain("expired")
        if (from === "completed" || from === "refunded") expect(stepsForTransferState(from, state)).toEqual([])
      }
    }
    // A duplicated or late event after the expired payout moved on changes nothing.
    expect(stepsForTransferState("deposit_confirmed", "funds_received")).toEqual([])
    expect(stepsForTransferState("processing", "funds_received")).toEqual([])
    expect(stepsForTransferState("completed", "payment_submitted")).toEqual([])
  })
})

describe("fee legs of an expired payout the provider completes", () => {
  const expired = {
    id: "po_test",
    status: "expired",
    completed_at: null,
    updated_at: new Date(0),
    fee_legs: [
      { code: "bridge_fx", amountUsd: "0.57", to: null, status: "quoted" },
      { code: "bridge", amountUsd: "0.32", to: null, status: "quoted" },
      { code: "copby", amountUsd: "0.64", to: "0x52908400098527886E0F7030069857D2E4169EE7", status: "quoted" }
    ]
  } as unknown as PayoutRow

  it("pending once the deposit is in, provider legs verified at completion, copby pending without a verified fee tx", () => {
    const at = new Date(1_000)
    const [first, second] = stepsForTransferState("expired", "payment_processed")
    const confirmed = moveTo(expired, first!, at)
    expect(confirmed.fee_legs.map((leg) => leg.status)).toEqual(["pending", "pending", "pending"])
    const done = moveTo(confirmed, second!, at)
    expect(done.status).toBe("completed")
    expect(done.completed_at).toEqual(at)
    expect(Object.fromEntries(done.fee_legs.map((leg) => [leg.code, leg.status])))
      .toEqual({ bridge_fx: "verified", bridge: "verified", copby: "pending" })
  })

  it("the partner may still confirm it once the provider moved it (the deposit was seen), and while expired", () => {
    expect(acceptsConfirm({ ...expired, status: "completed" }, true)).toBe(true)
    expect(acceptsConfirm(expired, false)).toBe(true)
  })
})
