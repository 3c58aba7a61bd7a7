import { SqlClient } from "effect/sql"
import { Effect } from "effect"

/**
 * When the provider reported that a payout's deposit arrived (funds_received or later) before the partner
 * confirmed it: such a payout still accepts the partner's confirm, which records its txHash.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE payouts ADD COLUMN provider_deposit_seen_at timestamptz`
})
