import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { PageRequest } from "../payouts/PayoutRepo.ts"
import { SwapRow } from "./SwapRow.ts"

const Owned = Schema.Struct({ integrationId: Schema.String, intentId: Schema.String })

/** Every query names the integration: another integration's swap is simply not found. */
export class SwapRepo extends Effect.Service<SwapRepo>()("SwapRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

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
      Result: SwapRow,
      execute: (row) =>
        sql`UPDATE swap_intents SET
              status = ${row.status},
              fee_legs = ${JSON.stringify(row.fee_legs)}::jsonb,
              tx_hash = ${row.tx_hash},
              updated_at = ${row.updated_at}
            WHERE id = ${row.id} RETURNING *`
    })

    const expireOverdue = (at: Date) =>
      sql`UPDATE swap_intents SET status = 'expired', updated_at = ${at}
          WHERE status = 'prepared' AND expires_at < ${at}`

    return {
      findOwned: (integrationId: string, intentId: string) => findOwned({ integrationId, intentId }).pipe(Effect.orDie),
      lockOwned: (integrationId: string, intentId: string) => lockOwned({ integrationId, intentId }).pipe(Effect.orDie),
      page: (request: typeof PageRequest.Type) => page(request).pipe(Effect.orDie),
      insert: (row: SwapRow) => insert(row).pipe(Effect.orDie),
      update: (row: SwapRow) => update(row).pipe(Effect.orDie),
      expireOverdue: (at: Date) => expireOverdue(at).pipe(Effect.orDie, Effect.asVoid)
    } as const
  })
}) {}
