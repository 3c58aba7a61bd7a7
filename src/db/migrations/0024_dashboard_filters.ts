import { SqlClient } from "effect/sql"
import { Effect } from "effect"

/**
 * What the dashboard's views ask of the public API (issue #31): list filters that never read an integration's every
 * row, and the start of a receiver's answer on each delivery attempt.
 *
 * - `GET payouts?status=` and `GET swaps?status=`: (integration_id, status, created_at, id) serves the filter in the
 *   list's own order, so a page reads only the rows it answers, however many other payouts the integration has.
 * - `GET payouts?breBKeyLast4=`: the same over the key's last 4 characters in lower case (the filter is
 *   case-insensitive; keys are ASCII, so `right` counts what the receipt's `breBKeyLast4` shows).
 * - `GET payouts?txHash=` uses the unique indexes of `tx_hash` and `fee_tx_hash`; `createdTo` the listing index;
 *   `GET events?resourceId=` the unique (integration_id, resource_id, sequence).
 * - `event_delivery_attempts.response_excerpt`: at most 256 characters of the receiver's body; null for earlier ones.
 *
 * Built inside the migrations' transaction (no CONCURRENTLY): on a large deployment, build the three indexes
 * CONCURRENTLY under these names first; `IF NOT EXISTS` then skips them.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE INDEX IF NOT EXISTS payouts_listing_status ON payouts (integration_id, status, created_at, id)`
  yield* sql`CREATE INDEX IF NOT EXISTS payouts_listing_key_last4
             ON payouts (integration_id, lower(right(bre_b_key, 4)), created_at, id)`
  yield* sql`CREATE INDEX IF NOT EXISTS swap_intents_listing_status
             ON swap_intents (integration_id, status, created_at, id)`
  yield* sql`ALTER TABLE event_delivery_attempts ADD COLUMN response_excerpt text`
})
