import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { migrateWith, runMigrations } from "../../src/db/Migrations.ts"
import { migrations } from "../../src/db/migrations/index.ts"
import { TestDatabaseLive } from "../support/database.ts"
import { payoutRow } from "../support/payoutRow.ts"

const before0018 = Object.fromEntries(Object.entries(migrations).filter(([key]) => Number(key.split("_")[0]) < 18))

describe("migration 0018: payout timelines", () => {
  it.live(
    "gives a payout made before it its creation, and its status then when it had moved (source backfill)",
    () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* migrateWith(before0018)
        yield* sql`INSERT INTO integrations (id, name) VALUES ('int_x', 'int_x')`
        const createdAt = new Date("2026-11-20T10:00:00.123Z")
        const updatedAt = new Date("2026-11-20T10:05:30.456Z")
        yield* sql`INSERT INTO payouts ${sql.insert(payoutRow("po_waiting", "awaiting_deposit", createdAt, createdAt))}`
        yield* sql`INSERT INTO payouts ${sql.insert(payoutRow("po_done", "completed", createdAt, updatedAt))}`
        yield* runMigrations
        const rows = yield* sql<{ id: string; timeline: unknown }>`SELECT id, timeline FROM payouts ORDER BY id`
        expect(rows).toEqual([
          {
            id: "po_done",
            timeline: [
              { status: "created", at: "2026-11-20T10:00:00.123Z", source: "backfill" },
              { status: "completed", at: "2026-11-20T10:05:30.456Z", source: "backfill" }
            ]
          },
          { id: "po_waiting", timeline: [{ status: "created", at: "2026-11-20T10:00:00.123Z", source: "backfill" }] }
        ])
      }).pipe(Effect.provide(TestDatabaseLive)),
    60_000
  )
})
