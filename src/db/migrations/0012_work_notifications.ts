import { SqlClient } from "effect/sql"
import { Effect } from "effect"

/**
 * New work wakes the polling loops (src/background/WorkSignal.ts): inserting a job or a webhook delivery notifies
 * `work_available`. PostgreSQL delivers it when the transaction commits (never for a rollback) and folds repeats
 * within one transaction into one, so it costs no round trip and at most one notification per commit. Row triggers,
 * not statement triggers: a statement that inserts no row (an event no endpoint subscribes to) wakes nobody.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE FUNCTION notify_work_available() RETURNS trigger LANGUAGE plpgsql AS $$
             BEGIN PERFORM pg_notify('work_available', TG_TABLE_NAME); RETURN NULL; END $$`
  yield* sql`CREATE TRIGGER jobs_work_available AFTER INSERT ON jobs
             FOR EACH ROW EXECUTE FUNCTION notify_work_available()`
  yield* sql`CREATE TRIGGER event_deliveries_work_available AFTER INSERT ON event_deliveries
             FOR EACH ROW EXECUTE FUNCTION notify_work_available()`
})
