import { SqlClient } from "effect/sql"
import { Effect } from "effect"

/**
 * The trace a write belongs to, for the work it leaves for later (issue #32, traces): the W3C `traceparent` of the
 * span that recorded an event (its deliveries' spans continue that trace) or queued a job (the job's span does). Null
 * when tracing was off, and for rows written before this migration. Nullable columns without a default: adding them
 * rewrites nothing.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE events ADD COLUMN traceparent text`
  yield* sql`ALTER TABLE jobs ADD COLUMN traceparent text`
})
