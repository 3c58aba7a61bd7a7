import { SqlClient } from "effect/sql"
import { Effect } from "effect"

/**
 * What the metrics sampler reads (src/worker/MetricsSampler.ts), each from a small partial index: the outbox's
 * pending deliveries by when their event was recorded (the backlog's size and its oldest), and the payouts in flight
 * (deposit_confirmed, processing) by status and last change (how many, how many stuck, the oldest). Neither reads a
 * finished row. No update that was HOT stops being so: their columns are in other indexes already (`state`, `status`,
 * `updated_at`) or never change (`created_at`).
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE INDEX event_deliveries_pending_age ON event_deliveries (created_at) WHERE state = 'pending'`
  yield* sql`CREATE INDEX payouts_in_flight ON payouts (status, updated_at)
             WHERE status IN ('deposit_confirmed', 'processing')`
})
