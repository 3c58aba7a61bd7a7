import { SqlClient } from "effect/sql"
import { Effect } from "effect"

/**
 * The reconciler also asks the provider about payouts expired less than RECONCILE_EXPIRED_FOR_MS ago (funds that
 * arrive late, DESIGN §3). Expired payouts pile up and are never asked about again after that: a partial index on
 * their expiry reaches the recent ones without passing the old (payouts_reconcile covers the payouts in flight).
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE INDEX payouts_reconcile_expired ON payouts (expires_at) WHERE status = 'expired'`
})
