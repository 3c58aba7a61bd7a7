import { SqlClient } from "effect/sql"
import { Effect } from "effect"

/**
 * Why a payout failed or was refunded (`failure`: code, category, retryable, message, at), where its deposit went
 * back (`refund`: status, to, token, amount, retained, txHash, at), and when the partner canceled it (`canceled_at`:
 * funds that arrive after a cancel are returned, not paid out). All null until they happen; rows made before this
 * migration have none (they failed without a recorded reason).
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE payouts ADD COLUMN failure jsonb, ADD COLUMN refund jsonb, ADD COLUMN canceled_at timestamptz`
})
