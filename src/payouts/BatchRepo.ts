import { IntegrationId, PayoutBatchId, PayoutStatus, type TxHash } from "@cop-integrations/contracts"
import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { creationTime, visibleBefore } from "../db/ListHorizon.ts"
import { PageRequest } from "../db/Pagination.ts"
import { type BatchItemRecord, BatchRow } from "./BatchPresent.ts"

const Owned = Schema.Struct({ integrationId: IntegrationId, batchId: PayoutBatchId })
const BatchStatuses = Schema.Struct({ batch_id: PayoutBatchId, status: PayoutStatus })

/**
 * The integration's batches of payouts; another integration's batch is simply not found. Locks: a transaction that
 * locks a batch's payouts takes them before the batch (PayoutRepo), so a batch's confirm and its payouts' own moves
 * never wait on each other in opposite orders.
 */
export class BatchRepo extends Context.Service<BatchRepo>()("BatchRepo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const findOwned = SqlSchema.findOneOption({
      Request: Owned,
      Result: BatchRow,
      execute: ({ batchId, integrationId }) =>
        sql`SELECT * FROM payout_batches WHERE id = ${batchId} AND integration_id = ${integrationId}`
    })

    const lockOwned = SqlSchema.findOneOption({
      Request: Owned,
      Result: BatchRow,
      execute: ({ batchId, integrationId }) =>
        sql`SELECT * FROM payout_batches WHERE id = ${batchId} AND integration_id = ${integrationId} FOR UPDATE`
    })

    const lockById = SqlSchema.findOne({
      Request: PayoutBatchId,
      Result: BatchRow,
      execute: (batchId) => sql`SELECT * FROM payout_batches WHERE id = ${batchId} FOR UPDATE`
    })

    const page = SqlSchema.findAll({
      Request: Schema.Struct({ ...PageRequest.fields, before: Schema.Date }),
      Result: BatchRow,
      execute: ({ after, before, createdFrom, createdTo, integrationId, limit }) =>
        sql`SELECT * FROM payout_batches
            WHERE integration_id = ${integrationId} AND created_at < ${before}
            ${createdFrom === null ? sql`` : sql`AND created_at >= ${createdFrom}`}
            ${createdTo === null ? sql`` : sql`AND created_at < ${createdTo}`}
            ${after === null ? sql`` : sql`AND (created_at, id) > (${after.createdAt}, ${after.id})`}
            ORDER BY created_at, id
            LIMIT ${limit}`
    })

    const statusesOf = SqlSchema.findAll({
      Request: Schema.Array(Schema.String),
      Result: BatchStatuses,
      execute: (batchIds) =>
        sql`SELECT batch_id, status FROM payouts WHERE batch_id IN ${sql.in(batchIds)} ORDER BY batch_id, id`
    })

    /**
     * A new batch, written (inside the transaction that writes its payouts, before them: they refer to it); its times
     * are the database clock's, as a payout's are. Answers the row as a read of it would decode it.
     */
    const insert = (integrationId: IntegrationId, build: (createdAt: Date) => BatchRow) =>
      Effect.gen(function*() {
        const row = build(yield* creationTime(sql, "payout_batches", integrationId))
        yield* sql`INSERT INTO payout_batches ${
          sql.insert({
            ...row,
            items: JSON.stringify(row.items),
            totals: JSON.stringify(row.totals),
            fee_transaction: JSON.stringify(row.fee_transaction)
          })
        }`
        return row
      }).pipe(Effect.orDie)

    return {
      insert,
      findOwned: (integrationId: IntegrationId, batchId: PayoutBatchId) =>
        findOwned({ integrationId, batchId }).pipe(Effect.orDie),
      lockOwned: (integrationId: IntegrationId, batchId: PayoutBatchId) =>
        lockOwned({ integrationId, batchId }).pipe(Effect.orDie),
      /** The batch locked, in a transaction that already holds the payouts it is about to read or change. */
      lockById: (batchId: PayoutBatchId) => lockById(batchId).pipe(Effect.orDie),
      /** One page of the integration's batches (keyset on creation), up to the list horizon as other lists. */
      page: (request: typeof PageRequest.Type) =>
        visibleBefore(sql, "payout_batches", request.integrationId).pipe(
          Effect.flatMap((before) => page({ ...request, before })),
          Effect.orDie
        ),
      /** The statuses of the payouts of each batch named. */
      statusesOf: (batchIds: ReadonlyArray<string>) =>
        (batchIds.length === 0 ? Effect.succeed([]) : statusesOf(batchIds)).pipe(Effect.orDie),
      /** The batch's confirm recorded: its hash, and each item with why the confirm did not take it (if it did not). */
      recordConfirm: (batchId: PayoutBatchId, txHash: TxHash, items: ReadonlyArray<BatchItemRecord>, at: Date) =>
        sql`UPDATE payout_batches SET tx_hash = ${txHash}, items = ${JSON.stringify(items)}::jsonb, updated_at = ${at}
            WHERE id = ${batchId}`.pipe(Effect.asVoid, Effect.orDie),
      /** The batch's last payout finished: recorded once (its event is sent once). */
      markFinished: (batchId: PayoutBatchId, at: Date) =>
        sql`UPDATE payout_batches SET finished_at = ${at}, updated_at = GREATEST(updated_at, ${at})
            WHERE id = ${batchId}`.pipe(Effect.asVoid, Effect.orDie)
    } as const
  })
}) {
  static readonly Default = Layer.effect(this, this.make)
}
