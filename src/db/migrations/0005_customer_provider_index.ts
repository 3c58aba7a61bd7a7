import { SqlClient } from "effect/sql"
import { Effect } from "effect"

/** KYC webhooks name the provider's customer: find ours by it, and never give one provider customer to two of ours. */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE UNIQUE INDEX customers_provider_customer ON customers (provider_customer_id)
             WHERE provider_customer_id IS NOT NULL`
})
