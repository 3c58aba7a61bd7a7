import { SqlClient } from "effect/sql"
import { Effect } from "effect"

/**
 * A payout's timeline (issue #22): its hops `{status, at, source}` as a jsonb array on the row, appended (`||`) by the
 * very statement that changes the status, so a hop is written with its change or not at all, and two writers never
 * lose each other's hops. Payouts made before it get a reconstructed one (`backfill`): their creation, and their
 * status now when they have moved since. `delayed_at`: when `payout.delayed` was sent (once); the partial index
 * serves the delay sweep over payouts in flight that have not been reported delayed.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE payouts ADD COLUMN timeline jsonb NOT NULL DEFAULT '[]'::jsonb`
  yield* sql`ALTER TABLE payouts ADD COLUMN delayed_at timestamptz`
  yield* sql`
    UPDATE payouts SET timeline =
      jsonb_build_array(jsonb_build_object(
        'status', 'created',
        'at', to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
        'source', 'backfill'))
      || CASE WHEN status = 'awaiting_deposit' THEN '[]'::jsonb ELSE jsonb_build_array(jsonb_build_object(
        'status', status,
        'at', to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
        'source', 'backfill')) END`
  yield* sql`CREATE INDEX payouts_delay_due ON payouts (updated_at)
             WHERE status IN ('deposit_confirmed', 'processing') AND delayed_at IS NULL`
})
