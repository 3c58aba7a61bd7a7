import { SqlClient } from "effect/sql"
import { Effect } from "effect"

/**
 * Restricted API keys (issue #35): a key's scopes (contracts/src/Scopes.ts), or NULL for a full key (every key issued
 * before, and every key issued without scopes).
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE api_keys ADD COLUMN scopes text[]`
})
