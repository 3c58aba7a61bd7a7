import { SqlClient } from "effect/sql"
import { Effect } from "effect"

/**
 * A confirm claims its hashes as `verifying` in one short transaction, checks the chain outside any transaction,
 * then marks them `claimed` or deletes them. The reconciler releases `verifying` claims left behind by a crash
 * (partial index on their age) and polls the provider for payouts that have not moved for a while, oldest first
 * (`reconciled_at`: when it last asked, so a payout it cannot settle does not starve the others; the later of
 * the two timestamps counts).
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE tx_hash_claims
             ADD COLUMN state text NOT NULL DEFAULT 'claimed' CHECK (state IN ('verifying', 'claimed'))`
  yield* sql`CREATE INDEX tx_hash_claims_resource ON tx_hash_claims (resource_kind, resource_id)`
  yield* sql`CREATE INDEX tx_hash_claims_verifying ON tx_hash_claims (claimed_at) WHERE state = 'verifying'`
  yield* sql`ALTER TABLE payouts ADD COLUMN reconciled_at timestamptz`
  yield* sql`CREATE INDEX payouts_reconcile ON payouts ((GREATEST(updated_at, reconciled_at)))
             WHERE status IN ('awaiting_deposit', 'deposit_confirmed', 'processing')`
})
