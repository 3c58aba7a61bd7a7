import { SqlClient, SqlSchema } from "effect/sql"
import { IntegrationId, QuoteId } from "@cop-integrations/contracts"
import { Context, Effect, Layer, Schema } from "effect"

const QuoteRow = Schema.Struct({
  id: QuoteId,
  from_token: Schema.String,
  sell_rate: Schema.BigDecimalFromString,
  mid_rate: Schema.BigDecimalFromString,
  destination_cop: Schema.NullOr(Schema.BigDecimalFromString),
  swap_sell_amount: Schema.NullOr(Schema.BigDecimalFromString),
  expires_at: Schema.Date
})

/** What a quote stores when it is given (decimals as their text). */
const NewQuote = Schema.Struct({
  id: QuoteId,
  integration_id: IntegrationId,
  from_token: Schema.String,
  sell_rate: Schema.String,
  mid_rate: Schema.String,
  destination_cop: Schema.NullOr(Schema.String),
  swap_sell_amount: Schema.NullOr(Schema.String),
  created_at: Schema.Date,
  expires_at: Schema.Date
})

const Owned = Schema.Struct({ integrationId: IntegrationId, quoteId: QuoteId })

/** Quotes given to an integration; another integration's quote is simply not found. */
export class QuoteRepo extends Context.Service<QuoteRepo>()("QuoteRepo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const findOwned = SqlSchema.findOneOption({
      Request: Owned,
      Result: QuoteRow,
      execute: ({ integrationId, quoteId }) =>
        sql`SELECT id, from_token, sell_rate, mid_rate, destination_cop, swap_sell_amount, expires_at FROM quotes
            WHERE id = ${quoteId} AND integration_id = ${integrationId}`
    })

    const insert = SqlSchema.void({
      Request: NewQuote,
      execute: (row) => sql`INSERT INTO quotes ${sql.insert(row)}`
    })

    return {
      findOwned: (integrationId: IntegrationId, quoteId: QuoteId) =>
        findOwned({ integrationId, quoteId }).pipe(Effect.orDie),
      insert: (row: typeof NewQuote.Type) => insert(row).pipe(Effect.orDie)
    } as const
  })
}) {
  static readonly Default = Layer.effect(this, this.make)
}
