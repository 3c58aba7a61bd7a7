import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { runMigrations } from "../../src/db/Migrations.ts"
import { TestDatabaseLive } from "../support/database.ts"

describe("delay sweep", () => {
  it.live(
    "finds stuck payouts through a partial index of the ones in flight not yet reported delayed",
    () =>
      Effect.gen(function*() {
        yield* runMigrations
        const sql = yield* SqlClient.SqlClient
        const plan = yield* sql.withTransaction(Effect.gen(function*() {
          // the tables are empty: forbid the sequential scan the planner would rightly pick
          yield* sql`SET LOCAL enable_seqscan = off`
          return yield* sql<{ "QUERY PLAN": string }>`EXPLAIN SELECT id FROM payouts
          WHERE status IN ('deposit_confirmed', 'processing') AND delayed_at IS NULL AND updated_at < now()
          ORDER BY updated_at LIMIT 500 FOR UPDATE SKIP LOCKED`
        }))
        expect(plan.map((row) => row["QUERY PLAN"]).join("\n")).toContain("payouts_delay_due")
      }).pipe(Effect.provide(TestDatabaseLive)),
    60_000
  )
})
