/**
 * Calls to the chain by operation and outcome, with their latency: the port wrapped once (`measuredChain`, applied in
 * src/App.ts), so the live node's and the mock's both count.
 */
import type { Effect } from "effect"
import { CALL_BUCKETS, counterFamily, histogramFamily, measureCall, outcomeOfExit } from "../base/MetricSeries.ts"
import type { Chain, ChainUnavailable, DepositNotVerified } from "./Chain.ts"

type CallLabels = { readonly operation: string; readonly outcome: string }

const calls = counterFamily<CallLabels>(
  "cop_chain_calls_total",
  "Calls to the chain by operation and outcome (ok; a transfer not verified by its kind: mismatch, reverted, " +
    "not_mined, unconfirmed, unreachable; unavailable; interrupted; defect)."
)
const durations = histogramFamily<CallLabels>(
  "cop_chain_call_duration_seconds",
  "Time a call to the chain took (all its RPCs), in seconds.",
  CALL_BUCKETS
)

const failureName = (error: DepositNotVerified | ChainUnavailable) =>
  error._tag === "ChainUnavailable" ? "unavailable" : error.kind

const outcomeOf = outcomeOfExit(failureName)

export const CHAIN_OPERATIONS = ["verify_transfer", "verify_refund", "receipt_transfers", "allowance"] as const

for (const operation of CHAIN_OPERATIONS) {
  // Present at 0 from the start, so a failure ratio over them is defined before the first failure.
  calls.touch({ operation, outcome: "ok" })
  calls.touch({ operation, outcome: operation === "allowance" ? "unavailable" : "unreachable" })
}

/** `chain` with each call counted and timed. */
export const measuredChain = (chain: Chain["Service"]): Chain["Service"] => {
  const measure = <A, E extends DepositNotVerified | ChainUnavailable>(
    operation: (typeof CHAIN_OPERATIONS)[number],
    effect: Effect.Effect<A, E>
  ) => measureCall(calls, durations, operation, outcomeOf, effect)
  return {
    ...chain,
    verifyTransfer: (check) => measure("verify_transfer", chain.verifyTransfer(check)),
    verifyRefund: (check) => measure("verify_refund", chain.verifyRefund(check)),
    receiptTransfers: (check) => measure("receipt_transfers", chain.receiptTransfers(check)),
    allowance: (input) => measure("allowance", chain.allowance(input))
  }
}
