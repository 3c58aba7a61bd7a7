import { SqlClient, SqlSchema } from "effect/sql"
import { Context, Effect, Layer, Schema } from "effect"

/** The provider's webhook events received, kept (for a retention period) to de-duplicate redeliveries. */
export class ProviderEventRepo extends Context.Service<ProviderEventRepo>()("ProviderEventRepo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const insertNew = SqlSchema.findAll({
      Request: Schema.Struct({ eventId: Schema.String, category: Schema.String }),
      Result: Schema.Struct({ event_id: Schema.String }),
      execute: ({ category, eventId }) =>
        sql`INSERT INTO webhook_events (event_id, event_category) VALUES (${eventId}, ${category})
                                 ON CONFLICT DO NOTHING RETURNING event_id`
    })

    return {
      /** Records the event; false when it was received before. */
      recordFirst: (eventId: string, category: string) =>
        insertNew({ eventId, category }).pipe(Effect.orDie, Effect.map((rows) => rows.length > 0))
    } as const
  })
}) {
  static readonly Default = Layer.effect(this, this.make)
}
