import { SqlClient } from "effect/sql"
import { Effect } from "effect"

/**
 * The events list in the order events were recorded (ARCHITECTURE.md, "Following a list"). `created_at` is the
 * writer's clock before its transaction commits, which can be seconds later, so a list ordered by it has events
 * appear behind a cursor already handed out. Each event now gets a `position`, 1, 2, 3 … per integration, once it is
 * committed, from one writer at a time: `position_events`, which readers run before a page (and the worker runs
 * for integrations no one reads). It takes the integration's counter row (`event_positions`) FOR UPDATE, so runs
 * take turns, and numbers the committed events still without a position, in insertion order (`insert_order`, from a
 * sequence at INSERT): every number it gives is above every number an earlier run committed, so once a reader has
 * seen position P no event can later get a position at or below P. One resource's events keep their order: its next
 * event is inserted only after the previous one committed (the outbox's counter row lock), so it has the higher
 * insert_order and is numbered in the same run or a later one.
 *
 * Existing events are numbered per integration in `created_at, id` order, the order their list had, and keep no
 * insert_order: a cursor from before (a createdAt and an id) still resumes where it was, among them.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE SEQUENCE events_insert_order AS bigint`
  yield* sql`ALTER TABLE events ADD COLUMN position bigint, ADD COLUMN insert_order bigint`
  yield* sql`ALTER TABLE events ALTER COLUMN insert_order SET DEFAULT nextval('events_insert_order')`
  yield* sql`ALTER SEQUENCE events_insert_order OWNED BY events.insert_order`
  yield* sql`
    UPDATE events e SET position = numbered.n
    FROM (SELECT id, row_number() OVER (PARTITION BY integration_id ORDER BY created_at, id) AS n FROM events) numbered
    WHERE numbered.id = e.id`
  yield* sql`
    CREATE TABLE event_positions (
      integration_id text PRIMARY KEY REFERENCES integrations(id),
      last_position bigint NOT NULL CHECK (last_position >= 0)
    )`
  yield* sql`
    INSERT INTO event_positions (integration_id, last_position)
    SELECT integration_id, max(position) FROM events GROUP BY integration_id`
  yield* sql`CREATE UNIQUE INDEX events_integration_position ON events (integration_id, position) WHERE position IS NOT NULL`
  yield* sql`CREATE INDEX events_unpositioned ON events (integration_id, insert_order) WHERE position IS NULL`
  // Each statement of a VOLATILE plpgsql function takes a new snapshot: the UPDATE, after the counter row is locked,
  // sees every position the previous holder committed. A row deleted meanwhile (retention) is skipped by the UPDATE;
  // the counter then ends at the highest number given, and a number given to no row is simply unused.
  yield* sql`
    CREATE FUNCTION position_events(integration text, batch integer) RETURNS integer
    LANGUAGE plpgsql VOLATILE AS $$
    DECLARE
      last bigint;
      numbered integer;
      highest bigint;
    BEGIN
      IF NOT EXISTS (SELECT 1 FROM events WHERE integration_id = integration AND position IS NULL) THEN
        RETURN 0;
      END IF;
      INSERT INTO event_positions (integration_id, last_position) VALUES (integration, 0) ON CONFLICT DO NOTHING;
      SELECT last_position INTO last FROM event_positions WHERE integration_id = integration FOR UPDATE;
      WITH pending AS (
        SELECT id, row_number() OVER (ORDER BY insert_order) AS n FROM events
        WHERE integration_id = integration AND position IS NULL
        ORDER BY insert_order
        LIMIT batch),
      numbered_rows AS (
        UPDATE events e SET position = last + pending.n FROM pending WHERE e.id = pending.id RETURNING e.position)
      SELECT count(*), max(position) INTO numbered, highest FROM numbered_rows;
      IF highest IS NOT NULL THEN
        UPDATE event_positions SET last_position = highest WHERE integration_id = integration;
      END IF;
      RETURN numbered;
    END
    $$`
})
