import { SqlClient } from "effect/sql"
import { Effect } from "effect"

/**
 * Replays of a range of events to one endpoint (issue #35): the replay, and its deliveries marked with it (ordinary
 * deliveries otherwise: the worker sends them as any other), so its progress is a count of their states.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE webhook_replays (
    id text PRIMARY KEY,
    integration_id text NOT NULL REFERENCES integrations (id),
    endpoint_id text NOT NULL REFERENCES webhook_endpoints (id),
    range_from timestamptz NOT NULL,
    range_to timestamptz NOT NULL,
    types text[],
    events integer NOT NULL,
    created_at timestamptz NOT NULL
  )`
  yield* sql`ALTER TABLE event_deliveries ADD COLUMN replay_id text`
  yield* sql`CREATE INDEX event_deliveries_replay ON event_deliveries (replay_id) WHERE replay_id IS NOT NULL`
})
