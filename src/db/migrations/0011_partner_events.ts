import { SqlClient } from "effect/sql"
import { Effect } from "effect"

/**
 * Events to partners. `events` is the outbox: each row is written in the transaction of the state change it
 * reports, with the exact body every delivery sends. `event_deliveries` is the delivery queue (one row per event
 * and endpoint, claimed with a lease so any replica can send it and a replica that dies mid-send loses nothing);
 * `event_delivery_attempts` records every attempt for the events API.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE webhook_endpoints (
      id text COLLATE "C" PRIMARY KEY,
      integration_id text NOT NULL REFERENCES integrations(id),
      url text NOT NULL,
      events text[] NOT NULL,
      secret text NOT NULL,
      previous_secret text,
      previous_secret_expires_at timestamptz,
      status text NOT NULL CHECK (status IN ('enabled', 'disabled')),
      disabled_reason text,
      failing_since timestamptz,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      deleted_at timestamptz
    )`
  yield* sql`CREATE INDEX webhook_endpoints_integration ON webhook_endpoints (integration_id, created_at, id) WHERE deleted_at IS NULL`
  yield* sql`
    CREATE TABLE events (
      id text COLLATE "C" PRIMARY KEY,
      integration_id text NOT NULL REFERENCES integrations(id),
      type text NOT NULL,
      resource_id text NOT NULL,
      body text NOT NULL,
      created_at timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX events_integration_created ON events (integration_id, created_at, id)`
  yield* sql`
    CREATE TABLE event_deliveries (
      seq bigserial PRIMARY KEY,
      event_id text NOT NULL REFERENCES events(id) ON DELETE CASCADE,
      endpoint_id text NOT NULL REFERENCES webhook_endpoints(id),
      resource_id text NOT NULL,
      state text NOT NULL CHECK (state IN ('pending', 'delivered', 'failed', 'canceled')),
      attempts integer NOT NULL DEFAULT 0,
      next_attempt_at timestamptz NOT NULL,
      leased_until timestamptz,
      created_at timestamptz NOT NULL,
      finished_at timestamptz
    )`
  yield* sql`CREATE INDEX event_deliveries_due ON event_deliveries (next_attempt_at, seq) WHERE state = 'pending'`
  yield* sql`CREATE INDEX event_deliveries_order ON event_deliveries (endpoint_id, resource_id, seq) WHERE state = 'pending'`
  yield* sql`CREATE INDEX event_deliveries_event ON event_deliveries (event_id)`
  yield* sql`
    CREATE TABLE event_delivery_attempts (
      id bigserial PRIMARY KEY,
      event_id text NOT NULL REFERENCES events(id) ON DELETE CASCADE,
      endpoint_id text NOT NULL,
      attempted_at timestamptz NOT NULL,
      duration_ms integer NOT NULL,
      response_status integer,
      error text,
      succeeded boolean NOT NULL
    )`
  yield* sql`CREATE INDEX event_delivery_attempts_event ON event_delivery_attempts (event_id, id)`
})
