import { SqlClient } from "effect/sql"
import { Effect } from "effect"

/**
 * IP allowlists per key (issue #35): the CIDRs a key is accepted from (`network/prefix`, as `parseCidrList` writes
 * them), or NULL for any address (every key before, and every key without one).
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE api_keys ADD COLUMN allowed_ips text[]`
})
