import { SqlClient } from "effect/sql"
import { Effect } from "effect"

/**
 * Batches of payouts signed once (issue #34): the batch (its user, token, items with their reference and payout or
 * error, exact totals and the one summed fee transfer) and, on each payout made for it, `batch_id` and the item's
 * `reference` (a single payout has neither). The listing index serves a batch list in creation order.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE payout_batches (
      id text COLLATE "C" PRIMARY KEY,
      integration_id text NOT NULL REFERENCES integrations(id),
      user_address text NOT NULL,
      from_token text NOT NULL,
      items jsonb NOT NULL,
      totals jsonb NOT NULL,
      fee_transaction jsonb NOT NULL,
      tx_hash text,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX payout_batches_listing ON payout_batches (integration_id, created_at, id)`
  yield* sql`ALTER TABLE payouts ADD COLUMN batch_id text REFERENCES payout_batches(id), ADD COLUMN reference text`
  yield* sql`CREATE INDEX payouts_batch ON payouts (batch_id) WHERE batch_id IS NOT NULL`
})
