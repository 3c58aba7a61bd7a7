import { SqlClient, SqlSchema } from "@effect/sql"
import { type EventType, IntegrationId, SwapId } from "@cop-integrations/contracts"
import { Effect, Schema } from "effect"
import { atomically } from "../db/Atomically.ts"
import { Outbox } from "../outbox/Outbox.ts"
import { PreviousStatus, recordingStatusChanges } from "../outbox/StatusEvents.ts"
import { EXPIRY_BATCH, PageRequest } from "../db/Pagination.ts"
import { presentSwap } from "./Present.ts"
import { SwapRow } from "./SwapRow.ts"

const Owned = Schema.Struct({ integrationId: IntegrationId, intentId: SwapId })

const UpdatedRow = Schema.extend(SwapRow, PreviousStatus)

/**
 * Every query names the integration: another integration's swap is simply not found. A swap that reaches
 * `confirmed`, `failed` or `expired` records its event in the same transaction (the outbox).
 */
export class SwapRepo extends Effect.Service<SwapRepo>()("SwapRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const outbox = yield* Outbox

    const recordEvent = (row: SwapRow) =>
      row.status === "prepared" ? Effect.void : outbox.record({
        integrationId: row.integration_id,
        type: `swap.${row.status}` satisfies EventType,
        resourceId: row.id,
        object: presentSwap(row),
        at: row.updated_at
      })

    const findOwned = SqlSchema.findOne({
      Request: Owned,
      Result: SwapRow,
      execute: ({ integrationId, intentId }) =>
        sql`SELECT * FROM swap_intents WHERE id = ${intentId} AND integration_id = ${integrationId}`
    })

    const lockOwned = SqlSchema.findOne({
      Request: Owned,
      Result: SwapRow,
      execute: ({ integrationId, intentId }) =>
        sql`SELECT * FROM swap_intents WHERE id = ${intentId} AND integration_id = ${integrationId} FOR UPDATE`
    })

    const page = SqlSchema.findAll({
      Request: PageRequest,
      Result: SwapRow,
      execute: ({ after, createdFrom, integrationId, limit }) =>
        sql`SELECT * FROM swap_intents
            WHERE integration_id = ${integrationId}
            ${createdFrom === null ? sql`` : sql`AND created_at >= ${createdFrom}`}
            ${after === null ? sql`` : sql`AND (created_at, id) > (${after.createdAt}, ${after.id})`}
            ORDER BY created_at, id
            LIMIT ${limit}`
    })

    const insert = SqlSchema.single({
      Request: SwapRow,
      Result: SwapRow,
      execute: (row) =>
        sql`INSERT INTO swap_intents ${
          sql.insert({
            ...row,
            fee_legs: JSON.stringify(row.fee_legs),
            transaction: JSON.stringify(row.transaction),
            approval_transaction: row.approval_transaction === null ? null : JSON.stringify(row.approval_transaction)
          })
        } RETURNING *`
    })

    const update = SqlSchema.single({
      Request: SwapRow,
      Result: UpdatedRow,
      execute: (row) =>
        sql`WITH previous AS (SELECT status FROM swap_intents WHERE id = ${row.id})
            UPDATE swap_intents SET
              status = ${row.status},
              fee_legs = ${JSON.stringify(row.fee_legs)}::jsonb,
              tx_hash = ${row.tx_hash},
              updated_at = ${row.updated_at}
            WHERE id = ${row.id} RETURNING swap_intents.*, (SELECT status FROM previous) AS previous_status`
    })

    const expireOverdue = SqlSchema.findAll({
      Request: Schema.DateFromSelf,
      Result: SwapRow,
      execute: (at) =>
        sql`UPDATE swap_intents SET status = 'expired', updated_at = ${at}
            WHERE id IN (SELECT id FROM swap_intents WHERE status = 'prepared' AND expires_at < ${at}
                         ORDER BY expires_at LIMIT ${EXPIRY_BATCH} FOR UPDATE SKIP LOCKED)
            RETURNING *`
    })

    const updateRecorded = recordingStatusChanges(sql, update, recordEvent)

    return {
      findOwned: (integrationId: IntegrationId, intentId: SwapId) => findOwned({ integrationId, intentId }).pipe(Effect.orDie),
      lockOwned: (integrationId: IntegrationId, intentId: SwapId) => lockOwned({ integrationId, intentId }).pipe(Effect.orDie),
      page: (request: typeof PageRequest.Type) => page(request).pipe(Effect.orDie),
      insert: (row: SwapRow) => insert(row).pipe(Effect.orDie),
      update: updateRecorded,
      expireOverdue: (at: Date) =>
        expireOverdue(at).pipe(Effect.tap(Effect.forEach(recordEvent)), atomically(sql), Effect.orDie, Effect.asVoid)
    } as const
  })
}) {}
