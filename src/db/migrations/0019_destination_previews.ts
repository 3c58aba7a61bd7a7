import { SqlClient } from "effect/sql"
import { Effect } from "effect"

/**
 * Payee previews: the provider's verification of a Bre-B key and holder name, owned by an integration, kept until
 * `expires_at` so a payout can reuse the verified destination (`external_account_id`) instead of registering it again.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE destination_previews (
      id text PRIMARY KEY,
      integration_id text NOT NULL REFERENCES integrations(id),
      bre_b_key text NOT NULL,
      account_owner_name text NOT NULL,
      user_address text,
      match boolean NOT NULL,
      external_account_id text,
      verified_owner_name text,
      bank_name text,
      document_last4 text,
      created_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL,
      CHECK (match = (external_account_id IS NOT NULL))
    )`
  yield* sql`CREATE INDEX destination_previews_expires_at ON destination_previews (expires_at)`
})
