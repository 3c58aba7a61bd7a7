import { SqlClient } from "effect/sql"
import { Effect } from "effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE integrations (
      id text PRIMARY KEY,
      name text NOT NULL UNIQUE,
      created_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`
    CREATE TABLE api_keys (
      id text PRIMARY KEY,
      integration_id text NOT NULL REFERENCES integrations(id),
      kind text NOT NULL CHECK (kind IN ('test', 'live')),
      key_hash text NOT NULL UNIQUE,
      last4 text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      revoked_at timestamptz
    )`
  yield* sql`CREATE INDEX api_keys_integration ON api_keys (integration_id)`
  yield* sql`
    CREATE TABLE customers (
      integration_id text NOT NULL REFERENCES integrations(id),
      user_address text NOT NULL CHECK (user_address = lower(user_address)),
      email text NOT NULL,
      kyc_status text NOT NULL,
      kyc_url text,
      provider_customer_id text,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      PRIMARY KEY (integration_id, user_address)
    )`
  yield* sql`
    CREATE TABLE otp_challenges (
      id text PRIMARY KEY,
      integration_id text NOT NULL REFERENCES integrations(id),
      user_address text NOT NULL CHECK (user_address = lower(user_address)),
      email text NOT NULL,
      code_hash text NOT NULL,
      attempts integer NOT NULL DEFAULT 0,
      created_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL,
      consumed_at timestamptz
    )`
  yield* sql`CREATE INDEX otp_challenges_owner ON otp_challenges (integration_id, user_address, created_at DESC)`
  yield* sql`
    CREATE TABLE rate_cache (
      pair text PRIMARY KEY,
      sell_rate text NOT NULL,
      mid_rate text NOT NULL,
      fetched_at timestamptz NOT NULL
    )`
  yield* sql`
    CREATE TABLE quotes (
      id text PRIMARY KEY,
      integration_id text NOT NULL REFERENCES integrations(id),
      from_token text NOT NULL,
      sell_rate text NOT NULL,
      mid_rate text NOT NULL,
      destination_cop text,
      created_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL
    )`
  yield* sql`
    CREATE TABLE payouts (
      id text COLLATE "C" PRIMARY KEY,
      integration_id text NOT NULL REFERENCES integrations(id),
      status text NOT NULL,
      user_address text NOT NULL,
      from_token text NOT NULL,
      destination_cop text NOT NULL,
      bre_b_key text NOT NULL,
      account_owner_name text NOT NULL,
      bank_name text,
      document_last4 text,
      sell_rate text NOT NULL,
      mid_rate text NOT NULL,
      deposit_chain text NOT NULL,
      deposit_currency text NOT NULL,
      deposit_address text NOT NULL,
      deposit_amount text NOT NULL,
      service_fee text NOT NULL,
      total_paid text NOT NULL,
      effective_usd_cop text NOT NULL,
      rate_display text NOT NULL,
      fee_legs jsonb NOT NULL,
      transaction jsonb NOT NULL,
      fee_transaction jsonb NOT NULL,
      commission_usd text NOT NULL,
      provider_transfer_id text NOT NULL,
      tx_hash text UNIQUE,
      fee_tx_hash text UNIQUE,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      expires_at timestamptz NOT NULL,
      completed_at timestamptz
    )`
  // Byte order for ids, so "then by payoutId" means the same on every database (keyset pagination)
  yield* sql`CREATE INDEX payouts_listing ON payouts (integration_id, created_at, id)`
  yield* sql`CREATE UNIQUE INDEX payouts_provider_transfer ON payouts (provider_transfer_id)`
  yield* sql`
    CREATE TABLE tx_hash_claims (
      tx_hash text PRIMARY KEY CHECK (tx_hash = lower(tx_hash)),
      resource_kind text NOT NULL,
      resource_id text NOT NULL,
      claimed_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`
    CREATE TABLE idempotency_keys (
      integration_id text NOT NULL REFERENCES integrations(id),
      idempotency_key text NOT NULL,
      request_hash text NOT NULL,
      response_status integer NOT NULL,
      response_body jsonb NOT NULL,
      resource_id text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (integration_id, idempotency_key)
    )`
  yield* sql`
    CREATE TABLE jobs (
      id bigserial PRIMARY KEY,
      kind text NOT NULL,
      payload jsonb NOT NULL,
      run_at timestamptz NOT NULL,
      attempts integer NOT NULL DEFAULT 0,
      last_error text,
      done_at timestamptz
    )`
  yield* sql`CREATE INDEX jobs_due ON jobs (run_at) WHERE done_at IS NULL`
  yield* sql`
    CREATE TABLE webhook_events (
      event_id text PRIMARY KEY,
      event_category text NOT NULL,
      received_at timestamptz NOT NULL DEFAULT now()
    )`
})
