/**
 * Calls to the payout provider by operation and outcome, with their latency: the port wrapped once
 * (`measuredProvider`, applied in src/App.ts), so the live adapter and the mock both count.
 */
import type { Effect } from "effect"
import { CALL_BUCKETS, counterFamily, histogramFamily, measureCall, outcomeOfExit } from "../base/MetricSeries.ts"
import type { PayoutProvider, ProviderFailure } from "./PayoutProvider.ts"

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

/** The operations, as labels. */
export const PROVIDER_OPERATIONS = [
  "usd_cop_rates",
  "create_kyc_link",
  "create_external_account",
  "create_transfer",
  "cancel_transfer",
  "get_customer_kyc",
  "get_transfer"
] as const

for (const operation of PROVIDER_OPERATIONS) {
  // Present at 0 from the start, so a failure ratio over them is defined before the first failure.
  for (const outcome of ["ok", "unavailable"]) calls.touch({ operation, outcome })
}

/** `provider` with each call counted and timed. */
export const measuredProvider = (provider: PayoutProvider["Service"]): PayoutProvider["Service"] => {
  const measure = <A, R>(
    operation: (typeof PROVIDER_OPERATIONS)[number],
    effect: Effect.Effect<A, ProviderFailure, R>
  ) => measureCall(calls, durations, operation, outcomeOf, effect)
  return {
    // Read through, not copied: a stand-in may change it (a test's provider switching to per-customer destinations).
    get destinationsPerCustomer() {
      return provider.destinationsPerCustomer
    },
    usdCopRates: measure("usd_cop_rates", provider.usdCopRates),
    createKycLink: (input) => measure("create_kyc_link", provider.createKycLink(input)),
    createExternalAccount: (input) => measure("create_external_account", provider.createExternalAccount(input)),
    createTransfer: (input) => measure("create_transfer", provider.createTransfer(input)),
    cancelTransfer: (transferId) => measure("cancel_transfer", provider.cancelTransfer(transferId)),
    getCustomerKyc: (customerId) => measure("get_customer_kyc", provider.getCustomerKyc(customerId)),
    getTransfer: (transferId) => measure("get_transfer", provider.getTransfer(transferId))
  }
}
