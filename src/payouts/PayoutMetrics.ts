/**
 * Payouts' metrics: each committed status change by the status it reached and, for `failed` and `refunded`, the
 * category of its failure (the contract's closed set); and the payouts in flight (deposit_confirmed, processing) by
 * status, how many are stuck and the oldest one's age, sampled from the database by the worker
 * (src/worker/MetricsSampler.ts).
 */
import { type FailureCategory, FailureCategory as FailureCategories, PayoutStatus } from "@cop-integrations/contracts"
import { counterFamily, gaugeFamily, secondsSince } from "../base/MetricSeries.ts"
import { isFailureStatus } from "./Failure.ts"

type TransitionLabels = { readonly status: PayoutStatus; readonly failure_category: FailureCategory | "none" }

const transitions = counterFamily<TransitionLabels>(
  "cop_payout_transitions_total",
  "Payout status changes, counted once committed, by the status reached (awaiting_deposit: created) and, for " +
    "failed and refunded, the failure's category (else none)."
)

// Present at 0 from the start, so a rate over any of them is defined before the first such change.
for (const status of PayoutStatus.literals) {
  if (!isFailureStatus(status)) transitions.touch({ status, failure_category: "none" })
  else for (const category of FailureCategories.literals) transitions.touch({ status, failure_category: category })
}

/** Counts a committed change to `status` (call it after commit: `SqlClient.afterCommit`). */
export const countTransition = (status: PayoutStatus, category: FailureCategory | undefined): void =>
  transitions.add({ status, failure_category: isFailureStatus(status) ? category ?? "none" : "none" })

/** The statuses a payout is in flight in: its deposit is in and the provider is paying it out. */
export const IN_FLIGHT_STATUSES = ["deposit_confirmed", "processing"] as const
export type InFlightStatus = (typeof IN_FLIGHT_STATUSES)[number]

type StatusLabels = { readonly status: InFlightStatus }

const inFlight = gaugeFamily<StatusLabels>(
  "cop_payouts_in_flight",
  "Payouts in deposit_confirmed or processing, by status, in the whole database: every replica reports the same " +
    "value, so aggregate with max()."
)
const stuck = gaugeFamily<StatusLabels>(
  "cop_payouts_stuck",
  "Payouts in deposit_confirmed or processing unchanged for PAYOUT_DELAYED_AFTER_MINUTES or longer (the ones " +
    "payout.delayed reports), by status; database-wide: every replica reports the same value, so aggregate with max()."
)
const oldest = gaugeFamily<StatusLabels>(
  "cop_payouts_in_flight_oldest_age_seconds",
  "Time since the oldest payout in deposit_confirmed or processing last changed, in seconds, by status, 0 when none; " +
    "database-wide: every replica reports the same value, so aggregate with max()."
)

/** One in-flight status's row of a sample. */
export interface InFlightSample {
  readonly status: InFlightStatus
  readonly count: number
  readonly stuck: number
  /** When the longest-unchanged one last changed; null when none. */
  readonly oldest: Date | null
}

export const setInFlight = (rows: ReadonlyArray<InFlightSample>, at: Date): void => {
  for (const status of IN_FLIGHT_STATUSES) {
    const row = rows.find((candidate) => candidate.status === status)
    inFlight.set({ status }, row?.count ?? 0)
    stuck.set({ status }, row?.stuck ?? 0)
    oldest.set({ status }, secondsSince(row?.oldest ?? null, at))
  }
}
