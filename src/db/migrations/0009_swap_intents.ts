import { SqlClient } from "effect/sql"
import { Effect } from "effect"

/**
 * Swap intents (the Swaps group): owned by an integration, listed by (created_at, id), expired by the sweep over a
 * partial index. Their txHash claims share `tx_hash_claims` with payouts (resource_kind 'swap').
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE swap_intents (
      id text PRIMARY KEY,
      integration_id text NOT NULL REFERENCES integrations(id),
      status text NOT NULL CHECK (status IN ('prepared', 'confirmed', 'failed', 'expired')),
      user_address text NOT NULL,
      from_token text NOT NULL,
      to_token text NOT NULL CHECK (to_token <> from_token),
      amount_in text NOT NULL,
      expected_amount_out text NOT NULL,
      min_amount_out text NOT NULL,
      slippage_bps integer NOT NULL CHECK (slippage_bps BETWEEN 1 AND 500),
      fee_legs jsonb NOT NULL,
      transaction jsonb NOT NULL,
      approval_transaction jsonb,
      tx_hash text CHECK (tx_hash = lower(tx_hash)),
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX swap_intents_list ON swap_intents (integration_id, created_at, id)`
  yield* sql`CREATE INDEX swap_intents_expiry ON swap_intents (expires_at) WHERE status = 'prepared'`
})
