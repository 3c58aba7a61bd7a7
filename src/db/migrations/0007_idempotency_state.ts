import { SqlClient } from "effect/sql"
import { Effect } from "effect"

/**
 * An Idempotency-Key row records intent before the provider is called: `started` with the pre-allocated resource
 * id (the payout id, from which the provider's idempotency key derives) and that provider key, committed on its
 * own; `done` with the stored response once the resource is written. `attempt` names the request that holds a
 * `started` row, so only it releases the row, and a stale row is taken over by exactly one retry. `intent` is what
 * the request fixed before calling out (the payout's rates), so a takeover repeats the same provider request. Rows
 * that existed before are finished ones.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE idempotency_keys
               ADD COLUMN state text NOT NULL DEFAULT 'done' CHECK (state IN ('started', 'done')),
               ADD COLUMN provider_key text,
               ADD COLUMN attempt text,
               ADD COLUMN intent jsonb,
               ADD COLUMN started_at timestamptz NOT NULL DEFAULT now()`
  yield* sql`ALTER TABLE idempotency_keys ALTER COLUMN state DROP DEFAULT`
  yield* sql`CREATE INDEX idempotency_keys_started_at ON idempotency_keys (started_at) WHERE state = 'started'`
})
