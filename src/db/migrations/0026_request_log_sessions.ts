import { SqlClient } from "effect/sql"
import { Effect } from "effect"

/**
 * A request made through the dashboard names its session (issue #31: sessions appear in the request logs). The
 * session's id, never its token; null for a request made with an API key. No foreign key: a log outlives nothing it
 * names, and its insert must never wait on the sessions table.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE request_logs ADD COLUMN dashboard_session_id text`
})
