import { SqlClient } from "effect/sql"
import { Effect } from "effect"

/**
 * A payout funded from COPm is paid in COPm (`source_amount`, what the user spends), while its receipt's totalPaid stays
 * in USD (`total_paid`). Null for USDC payouts, where the two are the same amount.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE payouts ADD COLUMN source_amount text`
})
