import { SqlClient } from "effect/sql"
import { Effect } from "effect"

/**
 * One destination verification budget per integration, shared by every replica: a token bucket kept as the time it
 * is full again (`full_at`), moved by one statement per verification (see destinations/VerificationBudget.ts).
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE destination_verification_budgets (
      integration_id text PRIMARY KEY REFERENCES integrations(id),
      full_at timestamptz NOT NULL
    )`
})
