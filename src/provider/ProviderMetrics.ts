/**
 * Calls to the payout provider by operation and outcome, with their latency: the port wrapped once
 * (`measuredProvider`, applied in src/App.ts), so the live adapter and the mock both count.
 */
import { CALL_BUCKETS, counterFamily, histogramFamily, measureCall, outcomeOfExit } from "../base/MetricSeries.ts"
import {
  type PayoutProvider,
  type ProviderFailure,
  type ProviderOperation,
  wrapProviderCalls
} from "./PayoutProvider.ts"

type CallLabels = { readonly operation: string; readonly outcome: string }

const calls = counterFamily<CallLabels>(
  "cop_provider_calls_total",
  "Calls to the payout provider by operation and outcome (ok, unavailable, refused, bad_response, interrupted, defect)."
)
const durations = histogramFamily<CallLabels>(
  "cop_provider_call_duration_seconds",
  "Time a call to the payout provider took, its bounded retries included, in seconds.",
  CALL_BUCKETS
)

/** `unavailable` (no answer, 5xx, timeouts), `refused` (a 4xx: nothing made), `bad_response` (an answer not read). */
const failureName = (error: ProviderFailure) =>
  error._tag === "ProviderUnavailable" ? "unavailable" : error.refused === true ? "refused" : "bad_response"

const outcomeOf = outcomeOfExit(failureName)

/** Each operation's label. */
const LABELS: Record<ProviderOperation, string> = {
  usdCopRates: "usd_cop_rates",
  createKycLink: "create_kyc_link",
  createExternalAccount: "create_external_account",
  createTransfer: "create_transfer",
  cancelTransfer: "cancel_transfer",
  getCustomerKyc: "get_customer_kyc",
  getTransfer: "get_transfer"
}

for (const operation of Object.values(LABELS)) {
  // Present at 0 from the start, so a failure ratio over them is defined before the first failure.
  for (const outcome of ["ok", "unavailable"]) calls.touch({ operation, outcome })
}

/** `provider` with each call counted and timed. */
export const measuredProvider = (provider: PayoutProvider["Service"]): PayoutProvider["Service"] =>
  wrapProviderCalls(
    provider,
    (operation, effect) => measureCall(calls, durations, LABELS[operation], outcomeOf, effect)
  )
