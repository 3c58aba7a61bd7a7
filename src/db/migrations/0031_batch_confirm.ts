import { SqlClient } from "effect/sql"
import { Effect } from "effect"

/**
 * One transaction confirms a whole batch of payouts (issue #34): every payout the batch's transaction paid records
 * that one hash as its `tx_hash` (and as its `fee_tx_hash` when the summed fee transfer is in it too). A hash stays
 * one resource's: `tx_hash_claims` holds it for the batch (resource kind `payout_batch`), and a single payout's
 * hashes stay unique among single payouts (the partial unique indexes). The plain indexes serve `GET payouts?txHash=`,
 * which finds a batch's payouts too. A batch records when its last payout finished (`finished_at`: its
 * `payout_batch.finished` event is sent once).
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE payouts DROP CONSTRAINT payouts_tx_hash_key, DROP CONSTRAINT payouts_fee_tx_hash_key`
  yield* sql`CREATE UNIQUE INDEX payouts_single_tx_hash ON payouts (tx_hash) WHERE batch_id IS NULL`
  yield* sql`CREATE UNIQUE INDEX payouts_single_fee_tx_hash ON payouts (fee_tx_hash) WHERE batch_id IS NULL`
  yield* sql`CREATE INDEX payouts_tx_hash ON payouts (tx_hash) WHERE tx_hash IS NOT NULL`
  yield* sql`CREATE INDEX payouts_fee_tx_hash ON payouts (fee_tx_hash) WHERE fee_tx_hash IS NOT NULL`
  yield* sql`ALTER TABLE payout_batches ADD COLUMN finished_at timestamptz`
})
