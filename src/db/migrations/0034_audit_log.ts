import { SqlClient } from "effect/sql"
import { Effect } from "effect"

/**
 * The audit log (issue #35): every security-relevant change to an integration, written in the transaction of the
 * change. `actor` and `details` are JSON as the contract's AuditActor and AuditDetails; no secret is ever in them.
 * Listed newest first per integration (the index), optionally by action.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE audit_log (
    id text PRIMARY KEY,
    integration_id text NOT NULL REFERENCES integrations (id),
    at timestamptz NOT NULL DEFAULT now(),
    action text NOT NULL,
    actor jsonb NOT NULL,
    target_id text NOT NULL,
    address text,
    request_id text,
    details jsonb NOT NULL DEFAULT '{}'
  )`
  yield* sql`CREATE INDEX audit_log_integration_at ON audit_log (integration_id, at DESC, id DESC)`
})
