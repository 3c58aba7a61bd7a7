import { SqlClient } from "effect/sql"
import { Effect } from "effect"

/**
 * A COPm quote with an amount is a firm price like a USDC one: it records the COPm its swap sells (whole tokens),
 * which a payout created with the quote charges while the route still delivers the deposit for it.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE quotes ADD COLUMN swap_sell_amount text`
})
