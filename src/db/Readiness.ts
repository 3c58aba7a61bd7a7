import type { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** The readiness probe: succeeds once the database answers a trivial query. */
export const databaseAnswers = (sql: SqlClient.SqlClient) => Effect.asVoid(sql`SELECT 1`)
