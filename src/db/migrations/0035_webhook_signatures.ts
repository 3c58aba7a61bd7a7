import { SqlClient } from "effect/sql"
import { Effect } from "effect"

/**
 * Asymmetric webhook signatures (issue #35): an endpoint signs with `v1` (HMAC with its secret, every endpoint before)
 * or `v1a` (ed25519 with the deployment's signing key, whose public key the API publishes). The key pair is one row
 * every replica shares, made by the first replica that needs it.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE webhook_endpoints ADD COLUMN signature_scheme text NOT NULL DEFAULT 'v1'
             CHECK (signature_scheme IN ('v1', 'v1a'))`
  yield* sql`CREATE TABLE webhook_signing_keys (
    id text PRIMARY KEY,
    public_key text NOT NULL,
    private_key text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
  )`
})
