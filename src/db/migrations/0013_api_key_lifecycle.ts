import { SqlClient } from "effect/sql"
import { Effect } from "effect"

/**
 * Key lifecycle for the keys CLI: an optional expiry (a key stops authenticating at `expires_at`; `keys rotate`
 * sets it on the old key for the overlap), the key that replaced a rotated one, and when a key was last used
 * (written at most once a minute per key, by the lookup itself).
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE api_keys
               ADD COLUMN expires_at timestamptz,
               ADD COLUMN last_used_at timestamptz,
               ADD COLUMN replaced_by text REFERENCES api_keys(id)`
})
