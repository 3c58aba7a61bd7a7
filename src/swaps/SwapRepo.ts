import { SqlClient, SqlSchema } from "effect/sql"
import { type EventType, type IntegrationId, SwapId, type SwapStatus } from "@cop-integrations/contracts"
import { Context, Effect, Layer, Schema } from "effect"
import { Outbox } from "../outbox/Outbox.ts"
import { PreviousStatus, recordingStatusChanges, statusChangeOf } from "../outbox/StatusEvents.ts"
import { atomically } from "../db/Atomically.ts"
import { creationTime } from "../db/ListHorizon.ts"
import { ownedTable } from "../db/OwnedTable.ts"
import type { PageRequest } from "../db/Pagination.ts"
import { presentSwap } from "./Present.ts"
import { countSwapTransition } from "./SwapMetrics.ts"
import { SwapRow } from "./SwapRow.ts"

const UpdatedRow = Schema.Struct({ ...SwapRow.fields, ...PreviousStatus.fields })

/**
 * Every query names the integration: another integration's swap is simply not found. A swap that reaches
 * `confirmed`, `failed` or `expired` records its event in the same transaction (the outbox).
 */
export class SwapRepo extends Context.Service<SwapRepo>()("SwapRepo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const outbox = yield* Outbox

    /** Counts the row's status change once its transaction commits (and never when it rolls back). */
    const countOnCommit = (row: SwapRow) => sql.afterCommit(Effect.sync(() => countSwapTransition(row.status)))

    const recordEvent = (row: SwapRow) =>
      Effect.andThen(
        row.status === "prepared" ? Effect.void : outbox.record({
          integrationId: row.integration_id,
          type: `swap.${row.status}` satisfies EventType,
          resourceId: row.id,
          object: presentSwap(row),
          at: row.updated_at
        }),
        countOnCommit(row)
      )

    const owned = ownedTable(sql, { table: "swap_intents", Row: SwapRow, Id: SwapId, expiresWhile: "prepared" })

    const insert = SqlSchema.findOne({
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

    const update = SqlSchema.findOne({
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

    const updateRecorded = recordingStatusChanges(
      sql,
      (row: SwapRow) => Effect.map(update(row), statusChangeOf),
      recordEvent
    )

    return {
      findOwned: owned.findOwned,
      lockOwned: owned.lockOwned,
      /** One page of the integration's swaps, of one status when given (served by migration 0024's index). */
      page: (request: typeof PageRequest.Type, filters: { readonly status?: SwapStatus | undefined } = {}) =>
        owned.page(request, filters.status === undefined ? sql`` : sql`AND status = ${filters.status}`),
      /** A new swap, its times the database clock's in the inserting transaction (the list is safe to follow). */
      insert: (integrationId: IntegrationId, build: (createdAt: Date) => SwapRow) =>
        creationTime(sql, "swap_intents", integrationId).pipe(
          Effect.flatMap((createdAt) => insert(build(createdAt))),
          Effect.tap(countOnCommit),
          atomically(sql),
          Effect.orDie
        ),
      update: updateRecorded,
      closeWindow: owned.closeWindow,
      expireOverdue: owned.expireOverdue(recordEvent)
    } as const
  })
}) {
  static readonly Default = Layer.effect(this, this.make)
}
