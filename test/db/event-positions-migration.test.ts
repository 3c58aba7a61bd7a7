/**
 * Migration 0021 gives the events written before it their list position, 1, 2, 3 … per integration in `created_at,
 * id` order (the order the list had), so a cursor from before it (a createdAt and an id) resumes where it was; events
 * recorded after it are numbered after them, in the order they were inserted, by `position_events`.
 */
import { layer } from "@effect/vitest"
import type { EventType, IntegrationId } from "@cop-integrations/contracts"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { expect } from "vitest"
import { migrateWith } from "../../src/db/Migrations.ts"
import { migrations } from "../../src/db/migrations/index.ts"
import { Outbox } from "../../src/outbox/Outbox.ts"
import { EventRepo } from "../../src/partnerEvents/EventRepo.ts"
import { TestDatabaseLive } from "../support/database.ts"

const before = Object.fromEntries(Object.entries(migrations).filter(([key]) => Number(key.split("_")[0]) < 21))

const ONE = "int_one" as IntegrationId
const T1 = "2026-01-01T00:00:00.000Z"
const T2 = "2026-01-01T00:00:05.000Z"

/** id, integration, resource, sequence, created_at: inserted out of order; evt_a2 and evt_b1 share a moment. */
const legacy = [
  ["evt_b1", "int_one", "po_b", 1, T2],
  ["evt_a1", "int_one", "po_a", 1, T1],
  ["evt_a2", "int_one", "po_a", 2, T2],
  ["evt_c1", "int_two", "po_c", 1, T1]
] as const

layer(TestDatabaseLive, { timeout: "60 seconds", excludeTestServices: true })(
  "migration 0021 (event positions)",
  (it) => {
    it.effect("numbers existing events per integration in created_at, id order; later ones follow them", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* migrateWith(before)
        yield* sql`INSERT INTO integrations (id, name) VALUES ('int_one', 'one'), ('int_two', 'two')`
        for (const [id, integration, resource, sequence, at] of legacy) {
          yield* sql`INSERT INTO events (id, integration_id, type, resource_id, sequence, body, created_at)
                   VALUES (${id}, ${integration}, 'payout.created', ${resource}, ${sequence}, '{}', ${at})`
        }
        yield* sql`INSERT INTO event_sequences (integration_id, resource_id, last_sequence)
                 SELECT integration_id, resource_id, max(sequence) FROM events GROUP BY integration_id, resource_id`

        yield* migrateWith(migrations)

        const positions = () =>
          sql<{ id: string; position: string | null }>`SELECT id, position FROM events ORDER BY integration_id, id`
        expect((yield* positions()).map((row) => [row.id, row.position])).toEqual([
          ["evt_a1", "1"],
          ["evt_a2", "2"],
          ["evt_b1", "3"],
          ["evt_c1", "1"]
        ])

        // recorded after: no position until numbered, then after the existing ones, in the order inserted
        const outbox = yield* Outbox.make
        const record = (resourceId: string, type: EventType) =>
          outbox.record({ integrationId: ONE, type, resourceId, object: { payoutId: resourceId }, at: new Date(T1) })
        yield* record("po_d", "payout.created")
        yield* record("po_a", "payout.completed")
        const events = yield* EventRepo.make
        const page = (after: Parameters<typeof events.page>[0]["after"]) =>
          events.page({ integrationId: ONE, createdFrom: null, after, limit: 10, type: null }).pipe(
            Effect.map((rows) => rows.map((row) => row.id))
          )
        expect(yield* page(null)).toEqual(["evt_a1", "evt_a2", "evt_b1"])
        expect(yield* events.positionPending(ONE)).toBe(2)
        expect(yield* events.positionPending(ONE)).toBe(0)
        const listed = yield* page(null)
        expect(listed.slice(0, 3)).toEqual(["evt_a1", "evt_a2", "evt_b1"])
        expect(listed.length).toBe(5)
        const [newer] = yield* sql<{ id: string }>`SELECT id FROM events WHERE resource_id = 'po_d'`
        expect(listed[3]).toBe(newer!.id)

        // a cursor from before: after (T2, evt_a2) comes evt_b1, then the new ones
        expect(yield* page({ _tag: "Keyset", createdAt: new Date(T2), id: "evt_a2" })).toEqual(listed.slice(2))
        expect(yield* page({ _tag: "Keyset", createdAt: new Date(T1), id: "evt_a0" })).toEqual(listed)
        expect(yield* page({ _tag: "Position", position: "3" })).toEqual(listed.slice(3))
      }))
  }
)
