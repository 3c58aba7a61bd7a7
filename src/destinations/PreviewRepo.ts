import { SqlClient, SqlSchema } from "effect/sql"
import { IntegrationId, PreviewId } from "@cop-integrations/contracts"
import { Context, Effect, Layer, Schema } from "effect"

export const PreviewRow = Schema.Struct({
  id: PreviewId,
  integration_id: IntegrationId,
  bre_b_key: Schema.String,
  account_owner_name: Schema.String,
  user_address: Schema.NullOr(Schema.String),
  match: Schema.Boolean,
  external_account_id: Schema.NullOr(Schema.String),
  verified_owner_name: Schema.NullOr(Schema.String),
  bank_name: Schema.NullOr(Schema.String),
  document_last4: Schema.NullOr(Schema.String),
  created_at: Schema.Date,
  expires_at: Schema.Date
})
export type PreviewRow = typeof PreviewRow.Type

const Owned = Schema.Struct({ integrationId: IntegrationId, previewId: PreviewId })

/** Payee previews given to an integration; another integration's preview is simply not found. */
export class PreviewRepo extends Context.Service<PreviewRepo>()("PreviewRepo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const findOwned = SqlSchema.findOneOption({
      Request: Owned,
      Result: PreviewRow,
      execute: ({ integrationId, previewId }) =>
        sql`SELECT * FROM destination_previews WHERE id = ${previewId} AND integration_id = ${integrationId}`
    })

    const insert = SqlSchema.void({
      Request: PreviewRow,
      execute: (row) => sql`INSERT INTO destination_previews ${sql.insert(row)}`
    })

    return {
      findOwned: (integrationId: IntegrationId, previewId: PreviewId) =>
        findOwned({ integrationId, previewId }).pipe(Effect.orDie),
      insert: (row: PreviewRow) => insert(row).pipe(Effect.orDie)
    } as const
  })
}) {
  static readonly Default = Layer.effect(this, this.make)
}
