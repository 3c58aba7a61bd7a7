import { IntegrationId, PayoutBatchId } from "@cop-integrations/contracts"
import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { creationTime } from "../db/ListHorizon.ts"
import { BatchRow } from "./BatchPresent.ts"

const Owned = Schema.Struct({ integrationId: IntegrationId, batchId: PayoutBatchId })

/** The integration's batches of payouts; another integration's batch is simply not found. */
export class BatchRepo extends Context.Service<BatchRepo>()("BatchRepo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const findOwned = SqlSchema.findOneOption({
      Request: Owned,
      Result: BatchRow,
      execute: ({ batchId, integrationId }) =>
        sql`SELECT * FROM payout_batches WHERE id = ${batchId} AND integration_id = ${integrationId}`
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
        findOwned({ integrationId, batchId }).pipe(Effect.orDie)
    } as const
  })
}) {
  static readonly Default = Layer.effect(this, this.make)
}
