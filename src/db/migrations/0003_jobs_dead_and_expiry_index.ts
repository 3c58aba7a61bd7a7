import { SqlClient } from "effect/sql"
import { Effect } from "effect"

/**
 * A job that failed its last allowed attempt is `dead` (kept, never claimed again); the due-jobs index skips
 * finished and dead jobs. The expiry sweep reads only payouts awaiting their deposit, by deadline.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE jobs ADD COLUMN dead_at timestamptz`
  yield* sql`DROP INDEX jobs_due`
  yield* sql`CREATE INDEX jobs_due ON jobs (run_at) WHERE done_at IS NULL AND dead_at IS NULL`
  yield* sql`CREATE INDEX payouts_awaiting_expiry ON payouts (expires_at) WHERE status = 'awaiting_deposit'`
})
