/**
 * Webhook deliveries' metrics: each attempt by outcome and reason, with its latency, counted once its outcome is
 * committed; endpoints disabled; and the outbox's backlog (pending deliveries, the oldest one's age), sampled from the
 * database by the worker (src/worker/MetricsSampler.ts).
 */
import { counterFamily, gaugeFamily, histogramFamily, metricsContext, secondsSince } from "../base/MetricSeries.ts"
import { Metric } from "effect"
import type { FailureKind } from "./Sender.ts"

/**
 * `delivered`; `retrying` (failed, another attempt scheduled); `failed` (failed, given up: its event's retry window
 * is over); `unrecorded` (sent, but its outcome could not be written: the lease runs out and it is sent again).
 */
export type DeliveryOutcome = "delivered" | "retrying" | "failed" | "unrecorded"

/** `2xx`; a failure: `3xx`, `4xx`, `5xx` (the receiver's answer), `timeout`, `network`, `refused` (target policy). */
export type DeliveryReason = "2xx" | FailureKind

type AttemptLabels = { readonly outcome: DeliveryOutcome; readonly reason: DeliveryReason }

const attempts = counterFamily<AttemptLabels>(
  "cop_webhook_delivery_attempts_total",
  "Webhook delivery attempts by outcome (delivered, retrying, failed: given up, unrecorded) and reason (2xx, 3xx, " +
    "4xx, 5xx, timeout, network, refused)."
)

const durations = histogramFamily<{ readonly outcome: DeliveryOutcome }>(
  "cop_webhook_delivery_duration_seconds",
  "Time a webhook delivery attempt took, from sending to the receiver's answer (or the timeout), in seconds.",
  [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]
)

const FAILURES: ReadonlyArray<FailureKind> = ["3xx", "4xx", "5xx", "timeout", "network", "refused"]
// Present at 0 from the start, so the failure ratio is defined before the first failure.
attempts.touch({ outcome: "delivered", reason: "2xx" })
for (const reason of FAILURES) {
  attempts.touch({ outcome: "retrying", reason })
  attempts.touch({ outcome: "failed", reason })
}

export const countAttempt = (outcome: DeliveryOutcome, reason: DeliveryReason, seconds: number): void => {
  attempts.add({ outcome, reason })
  durations.observe({ outcome }, seconds)
}

const disabled = Metric.counter("cop_webhook_endpoints_disabled_total", {
  description: "Webhook endpoints disabled after every delivery to them failed for the whole retry window.",
  incremental: true
})
disabled.updateUnsafe(0, metricsContext)

export const countEndpointDisabled = (): void => disabled.updateUnsafe(1, metricsContext)

const backlogGauges = gaugeFamily<Record<string, never>>(
  "cop_outbox_pending_deliveries",
  "Webhook deliveries not yet delivered nor given up (pending), in the whole database: every replica reports the " +
    "same value, so aggregate with max()."
)
const oldestGauges = gaugeFamily<Record<string, never>>(
  "cop_outbox_oldest_pending_age_seconds",
  "Age of the oldest pending webhook delivery (since its event), in seconds, 0 when none; database-wide: every " +
    "replica reports the same value, so aggregate with max()."
)

/** What a sample of the outbox read. */
export interface OutboxBacklog {
  readonly pending: number
  /** When the oldest pending delivery's event was recorded; null when none is pending. */
  readonly oldest: Date | null
}

export const setOutboxBacklog = (backlog: OutboxBacklog, at: Date): void => {
  backlogGauges.set({}, backlog.pending)
  oldestGauges.set({}, secondsSince(backlog.oldest, at))
}
