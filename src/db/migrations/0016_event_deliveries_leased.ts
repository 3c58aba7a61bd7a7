import { SqlClient } from "effect/sql"
import { Effect } from "effect"

/**
 * The delivery claim counts each endpoint's deliveries in flight (leased) on every round. Leases are cleared with
 * each attempt's outcome, so leased rows are few beside a backlog of pending retries: a partial index on them keeps
 * that count from reading the backlog (100,000 pending rows: 13 ms a claim by a scan, well under 1 ms with it).
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE INDEX event_deliveries_leased ON event_deliveries (endpoint_id) WHERE state = 'pending' AND leased_until IS NOT NULL`
})
