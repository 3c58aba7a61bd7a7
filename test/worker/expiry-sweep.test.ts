import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { runMigrations } from "../../src/db/Migrations.ts"
import { TestDatabaseLive } from "../support/database.ts"

describe("expiry sweep", () => {
  it.live("finds overdue payouts through a partial index of the ones awaiting a deposit", () =>
    Effect.gen(function*() {
      yield* runMigrations
      const sql = yield* SqlClient.SqlClient
      const plan = yield* sql.withTransaction(Effect.gen(function*() {
        // the tables are empty: forbid the sequential scan the planner would rightly pick
        yield* sql`SET LOCAL enable_seqscan = off`
        return yield* sql<{ "QUERY PLAN": string }>`EXPLAIN UPDATE payouts SET status = 'expired', updated_at = now()
                                                   WHERE status = 'awaiting_deposit' AND expires_at < now()`
      }))
      expect(plan.map((row) => row["QUERY PLAN"]).join("\n")).toContain("payouts_awaiting_expiry")
      const [index] = yield* sql<
        { indexdef: string }
      >`SELECT indexdef FROM pg_indexes WHERE indexname = 'payouts_awaiting_expiry'`
      expect(index?.indexdef).toMatch(/\(expires_at\) WHERE \(status = 'awaiting_deposit'::text\)$/)
    }).pipe(Effect.provide(TestDatabaseLive)), 60_000)
})
