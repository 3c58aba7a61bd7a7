import { SqlClient } from "effect/sql"
import { Effect } from "effect"

/**
 * What the provider reports it delivered (its transfer receipt's `final_amount`, COP with 2 decimals), once it
 * does: the receipt's `totalReceived` shows it instead of the requested `destinationCop` (DESIGN §3, Payout).
 * Null until the provider reports it. Text, like every other amount column: exact decimal strings.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE payouts ADD COLUMN total_received_cop text`
})
