/**
 * Migration 0017 numbers the events written before it: 1, 2, 3 … per resource in `created_at, id` order, the stored
 * body gaining `"sequence":n` before `"data"` (so `GET events` and redeliveries show it), and the resource's counter
 * set to its last number, so the outbox's next event of that resource follows on without a gap or a duplicate.
 */
import { layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { expect } from "vitest"
import { migrateWith } from "../../src/db/Migrations.ts"
import { migrations } from "../../src/db/migrations/index.ts"
import { Outbox } from "../../src/outbox/Outbox.ts"
import { TestDatabaseLive } from "../support/database.ts"

const before = Object.fromEntries(Object.entries(migrations).filter(([key]) => Number(key.split("_")[0]) < 17))

/** An event body as the outbox wrote it before sequences. */
const oldBody = (id: string, type: string, at: string, object: unknown) =>
  JSON.stringify({ id, type, createdAt: at, data: { object } })

const T1 = "2026-01-01T00:00:00.000Z"
const T2 = "2026-01-01T00:00:05.000Z"

/** id, integration, resource, created_at: inserted out of order; evt_a2 and evt_a3 share a moment (id breaks the tie). */
const legacy = [
  ["evt_a3", "int_one", "po_a", T2],
  ["evt_b1", "int_one", "po_b", T1],
  ["evt_a1", "int_one", "po_a", T1],
  ["evt_a2", "int_one", "po_a", T2],
  ["evt_c1", "int_two", "po_a", T2]
] as const

layer(TestDatabaseLive, { timeout: "60 seconds", excludeTestServices: true })(
  "migration 0017 (event sequence)",
  (it) => {
    it.effect("numbers existing events per resource in created_at, id order and the outbox continues from there", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* migrateWith(before)
        yield* sql`INSERT INTO integrations (id, name) VALUES ('int_one', 'one'), ('int_two', 'two')`
        for (const [id, integration, resource, at] of legacy) {
          // an object whose own text holds the envelope's marker: only the envelope's is replaced
          const body = oldBody(id, "payout.created", at, { payoutId: resource, note: ",\"data\":{" })
          yield* sql`INSERT INTO events (id, integration_id, type, resource_id, body, created_at)
                   VALUES (${id}, ${integration}, 'payout.created', ${resource}, ${body}, ${at})`
        }

        yield* migrateWith(migrations)

        const rows = yield* sql<{ id: string; sequence: number; body: string }>`
        SELECT id, sequence, body FROM events ORDER BY id`
        expect(rows.map((row) => [row.id, row.sequence])).toEqual([
          ["evt_a1", 1],
          ["evt_a2", 2],
          ["evt_a3", 3],
          ["evt_b1", 1],
          ["evt_c1", 1]
        ])
        for (const row of rows) {
          const [, , resource, at] = legacy.find(([id]) => id === row.id)!
          expect(row.body).toBe(
            `{"id":"${row.id}","type":"payout.created","createdAt":"${at}","sequence":${row.sequence},` +
              `"data":{"object":{"payoutId":"${resource}","note":",\\"data\\":{"}}}`
          )
          expect(Object.keys(JSON.parse(row.body))).toEqual(["id", "type", "createdAt", "sequence", "data"])
        }

        const outbox = yield* Outbox.make
        yield* outbox.record({
          integrationId: "int_one" as never,
          type: "payout.processing",
          resourceId: "po_a",
          object: { payoutId: "po_a" },
          at: new Date()
        })
        const next = yield* sql<{ sequence: number; body: string }>`
        SELECT sequence, body FROM events WHERE integration_id = 'int_one' AND resource_id = 'po_a'
        ORDER BY sequence DESC LIMIT 1`
        expect(next[0]?.sequence).toBe(4)
        expect(JSON.parse(next[0]!.body).sequence).toBe(4)

        const duplicate =
          yield* sql`INSERT INTO events (id, integration_id, type, resource_id, sequence, body, created_at)
                   VALUES ('evt_dup', 'int_one', 'payout.created', 'po_a', 4, '{}', now())`.pipe(Effect.flip)
        expect(String(duplicate.cause)).toContain("UniqueViolation")
      }))
  }
)
