import { SqlClient, SqlSchema } from "@effect/sql"
import type { EventType } from "@cop-integrations/contracts"
import { Effect, Option, Schema } from "effect"
import { atomically } from "../db/Atomically.ts"
import { EXPIRY_BATCH, PageRequest } from "../db/Pagination.ts"
import { Outbox } from "../outbox/Outbox.ts"
import { PreviousStatus, recordingStatusChanges } from "../outbox/StatusEvents.ts"
import { PayoutRow } from "./PayoutRow.ts"
import { presentPayout } from "./Present.ts"

const Owned = Schema.Struct({ integrationId: Schema.String, payoutId: Schema.String })

const eventTypeOf = (row: PayoutRow): EventType =>
  row.status === "awaiting_deposit" ? "payout.created" : `payout.${row.status}`

const UpdatedRow = Schema.extend(PayoutRow, PreviousStatus)
const DepositSeen = Schema.Struct({ provider_deposit_seen_at: Schema.NullOr(Schema.DateFromSelf) })

/**
 * Every query names the integration: another integration's payout is simply not found. Every write that creates a
 * payout or changes its status records the matching event in the same transaction (the outbox): no status without
 * its event, no event without its status.
 */
export class PayoutRepo extends Effect.Service<PayoutRepo>()("PayoutRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const outbox = yield* Outbox

    const recordEvent = (row: PayoutRow) =>
      outbox.record({
        integrationId: row.integration_id,
        type: eventTypeOf(row),
        resourceId: row.id,
        object: presentPayout(row),
        at: row.updated_at
      })

    const findOwned = SqlSchema.findOne({
      Request: Owned,
      Result: PayoutRow,
      execute: ({ integrationId, payoutId }) =>
        sql`SELECT * FROM payouts WHERE id = ${payoutId} AND integration_id = ${integrationId}`
    })

    const lockOwned = SqlSchema.findOne({
      Request: Owned,
      Result: PayoutRow,
      execute: ({ integrationId, payoutId }) =>
        sql`SELECT * FROM payouts WHERE id = ${payoutId} AND integration_id = ${integrationId} FOR UPDATE`
    })

    const lockForConfirm = SqlSchema.findOne({
      Request: Owned,
      Result: Schema.extend(PayoutRow, DepositSeen),
      execute: ({ integrationId, payoutId }) =>
        sql`SELECT * FROM payouts WHERE id = ${payoutId} AND integration_id = ${integrationId} FOR UPDATE`
    })

    const lockByTransfer = SqlSchema.findOne({
      Request: Schema.String,
      Result: PayoutRow,
      execute: (transferId) => sql`SELECT * FROM payouts WHERE provider_transfer_id = ${transferId} FOR UPDATE`
    })

    const page = SqlSchema.findAll({
      Request: PageRequest,
      Result: PayoutRow,
      execute: ({ after, createdFrom, integrationId, limit }) =>
        sql`SELECT * FROM payouts
            WHERE integration_id = ${integrationId}
            ${createdFrom === null ? sql`` : sql`AND created_at >= ${createdFrom}`}
            ${after === null ? sql`` : sql`AND (created_at, id) > (${after.createdAt}, ${after.id})`}
            ORDER BY created_at, id
            LIMIT ${limit}`
    })

    const insert = SqlSchema.single({
      Request: PayoutRow,
      Result: PayoutRow,
      execute: (row) =>
        sql`INSERT INTO payouts ${
          sql.insert({
            ...row,
            fee_legs: JSON.stringify(row.fee_legs),
            transaction: JSON.stringify(row.transaction),
            fee_transaction: JSON.stringify(row.fee_transaction)
          })
        } RETURNING *`
    })

    // `previous` reads the row as it was before this statement's change (its snapshot), so the status change is known.
    const update = SqlSchema.single({
      Request: PayoutRow,
      Result: UpdatedRow,
      execute: (row) =>
        sql`WITH previous AS (SELECT status FROM payouts WHERE id = ${row.id})
            UPDATE payouts SET
              status = ${row.status},
              fee_legs = ${JSON.stringify(row.fee_legs)}::jsonb,
              tx_hash = ${row.tx_hash},
              fee_tx_hash = ${row.fee_tx_hash},
              updated_at = ${row.updated_at},
              completed_at = ${row.completed_at},
              total_received_cop = COALESCE(${row.total_received_cop ?? null}, total_received_cop)
            WHERE id = ${row.id} RETURNING payouts.*, (SELECT status FROM previous) AS previous_status`
    })

    const markDepositSeen = (id: string, at: Date) =>
      sql`UPDATE payouts SET provider_deposit_seen_at = COALESCE(provider_deposit_seen_at, ${at}) WHERE id = ${id}`

    const expireOverdue = SqlSchema.findAll({
      Request: Schema.DateFromSelf,
      Result: PayoutRow,
      execute: (at) =>
        sql`UPDATE payouts SET status = 'expired', updated_at = ${at}
            WHERE id IN (SELECT id FROM payouts WHERE status = 'awaiting_deposit' AND expires_at < ${at}
                         ORDER BY expires_at LIMIT ${EXPIRY_BATCH} FOR UPDATE SKIP LOCKED)
            RETURNING *`
    })

    const updateRecorded = recordingStatusChanges(sql, update, recordEvent)

    return {
      findOwned: (integrationId: string, payoutId: string) =>
        findOwned({ integrationId, payoutId }).pipe(Effect.orDie),
      lockOwned: (integrationId: string, payoutId: string) =>
        lockOwned({ integrationId, payoutId }).pipe(Effect.orDie),
      /** The row locked, and whether the provider reported its deposit arriving (one statement for the confirm). */
      lockForConfirm: (integrationId: string, payoutId: string) =>
        lockForConfirm({ integrationId, payoutId }).pipe(
          Effect.orDie,
          Effect.map(Option.map(({ provider_deposit_seen_at, ...row }) => ({
            row,
            depositSeenByProvider: provider_deposit_seen_at !== null
          })))
        ),
      lockByTransfer: (transferId: string) => lockByTransfer(transferId).pipe(Effect.orDie),
      page: (request: typeof PageRequest.Type) => page(request).pipe(Effect.orDie),
      insert: (row: PayoutRow) =>
        insert(row).pipe(Effect.tap(recordEvent), atomically(sql), Effect.orDie),
      update: updateRecorded,
      markDepositSeen: (id: string, at: Date) => markDepositSeen(id, at).pipe(Effect.orDie, Effect.asVoid),
      expireOverdue: (at: Date) =>
        expireOverdue(at).pipe(Effect.tap(Effect.forEach(recordEvent)), atomically(sql), Effect.orDie, Effect.asVoid)
    } as const
  })
}) {}

