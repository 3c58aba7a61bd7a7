import { SqlClient } from "effect/sql"
import { Effect } from "effect"

/**
 * Ordered events: every event carries `sequence`, 1, 2, 3, … per resource (payout, customer, swap, endpoint).
 * `event_sequences` holds each resource's last one; the outbox takes the next with an upsert that locks that row
 * until its transaction ends, so two transactions recording for one resource take turns and a rolled-back one leaves
 * no gap. The unique constraint makes a duplicate impossible whatever a writer does.
 *
 * Existing events are numbered in `created_at, id` order per resource, and their stored body gains `"sequence":n`
 * before `"data"` (the envelope's own keys come first and hold no such text), so listing and redelivering them
 * shows it like a new event's body.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE events ADD COLUMN sequence integer`
  yield* sql`
    UPDATE events e SET
      sequence = numbered.n,
      body = overlay(e.body PLACING ',"sequence":' || numbered.n || ',"data":'
                     FROM position(',"data":' IN e.body) FOR length(',"data":'))
    FROM (SELECT id, row_number() OVER (PARTITION BY integration_id, resource_id ORDER BY created_at, id) AS n
          FROM events) numbered
    WHERE numbered.id = e.id`
  yield* sql`ALTER TABLE events ALTER COLUMN sequence SET NOT NULL, ADD CONSTRAINT events_sequence_positive CHECK (sequence > 0)`
  yield* sql`ALTER TABLE events ADD CONSTRAINT events_resource_sequence UNIQUE (integration_id, resource_id, sequence)`
  yield* sql`
    CREATE TABLE event_sequences (
      integration_id text NOT NULL REFERENCES integrations(id),
      resource_id text NOT NULL,
      last_sequence integer NOT NULL CHECK (last_sequence > 0),
      PRIMARY KEY (integration_id, resource_id)
    )`
  yield* sql`
    INSERT INTO event_sequences (integration_id, resource_id, last_sequence)
    SELECT integration_id, resource_id, max(sequence) FROM events GROUP BY integration_id, resource_id`
})
