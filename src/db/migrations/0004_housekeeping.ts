import { SqlClient } from "effect/sql"
import { Effect } from "effect"

/**
 * The payout statuses of the contract (frozen here: a new status is a new migration), and the indexes the
 * periodic clean-up (src/worker/Housekeeping.ts) deletes by.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE payouts ADD CONSTRAINT payouts_status_allowed CHECK (status IN (
    'awaiting_deposit', 'deposit_confirmed', 'processing', 'completed', 'expired', 'failed', 'refunded'))`
  yield* sql`CREATE INDEX quotes_expires_at ON quotes (expires_at)`
  yield* sql`CREATE INDEX otp_challenges_expires_at ON otp_challenges (expires_at)`
  yield* sql`CREATE INDEX jobs_done_at ON jobs (done_at) WHERE done_at IS NOT NULL`
  yield* sql`CREATE INDEX jobs_dead_at ON jobs (dead_at) WHERE dead_at IS NOT NULL`
  yield* sql`CREATE INDEX webhook_events_received_at ON webhook_events (received_at)`
})
