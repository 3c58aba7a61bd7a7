import { SqlClient } from "effect/sql"
import { Effect } from "effect"

/**
 * The partner dashboard's sign-in (src/dashboard/): one-time links (valid 5 minutes, consumed by one UPDATE) and the
 * sessions they open. Both are found by the SHA-256 of their random token, never stored as such; each names the API
 * key that made it, and stops authenticating with that key.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE dashboard_sessions (
      id text PRIMARY KEY,
      token_hash text NOT NULL UNIQUE,
      integration_id text NOT NULL REFERENCES integrations(id),
      key_id text NOT NULL REFERENCES api_keys(id),
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL,
      ended_at timestamptz
    )`
  yield* sql`CREATE INDEX dashboard_sessions_expires_at ON dashboard_sessions (expires_at)`
  yield* sql`
    CREATE TABLE dashboard_sign_in_links (
      token_hash text PRIMARY KEY,
      integration_id text NOT NULL REFERENCES integrations(id),
      key_id text NOT NULL REFERENCES api_keys(id),
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL,
      used_at timestamptz,
      session_id text REFERENCES dashboard_sessions(id) ON DELETE SET NULL
    )`
  yield* sql`CREATE INDEX dashboard_sign_in_links_expires_at ON dashboard_sign_in_links (expires_at)`
})
