import { Effect } from "effect"
import type { SqlClient } from "effect/sql"

/** The readiness probe: succeeds once the database answers a trivial query. */
export const databaseAnswers = (sql: SqlClient.SqlClient) => Effect.asVoid(sql`SELECT 1`)
