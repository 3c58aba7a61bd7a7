import { SqlClient } from "effect/sql"
import { Effect } from "effect"

/**
 * Request logs: every authenticated request of an integration, written in batches off the request path
 * (src/requestLogs/RequestLogRecorder.ts) and kept REQUEST_LOG_RETENTION_DAYS (housekeeping deletes older rows by
 * `at`). Pruned rather than partitioned by day: a partitioned table needs tomorrow's partition made ahead of every
 * write (a missing one fails the batch), its primary key must carry `at`, and the deletes are small, batched and
 * served by a BRIN index on `at` (rows arrive in time order, so it stays a few pages). A list reads the integration's
 * newest rows first (`request_logs_list`); a request id names the integration's request (`request_logs_request_id`).
 * No foreign key to integrations: an insert checks nothing but its own row.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE request_logs (
      id text PRIMARY KEY,
      integration_id text NOT NULL,
      request_id text NOT NULL,
      at timestamptz NOT NULL,
      method text NOT NULL,
      path text NOT NULL,
      status smallint NOT NULL,
      error_code text,
      error text,
      duration_ms integer NOT NULL,
      key_id text NOT NULL,
      key_last4 text NOT NULL,
      client_address text NOT NULL,
      request_query jsonb NOT NULL,
      request_headers jsonb NOT NULL,
      request_body jsonb,
      response_body jsonb
    )`
  yield* sql`CREATE INDEX request_logs_list ON request_logs (integration_id, at DESC, id DESC)`
  yield* sql`CREATE INDEX request_logs_request_id ON request_logs (integration_id, request_id, at DESC)`
  yield* sql`CREATE INDEX request_logs_at ON request_logs USING brin (at)`
})
