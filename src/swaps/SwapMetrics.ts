/** Swaps' status changes, counted once committed, by the status reached (prepared: created). */
import { SwapStatus } from "@cop-integrations/contracts"
import { counterFamily } from "../base/MetricSeries.ts"

const transitions = counterFamily<{ readonly status: SwapStatus }>(
  "cop_swap_transitions_total",
  "Swap status changes, counted once committed, by the status reached (prepared: created)."
)

// Present at 0 from the start, so a rate over any of them is defined before the first such change.
for (const status of SwapStatus.literals) transitions.touch({ status })

/** Counts a committed change to `status` (call it after commit: `SqlClient.afterCommit`). */
export const countSwapTransition = (status: SwapStatus): void => transitions.add({ status })
