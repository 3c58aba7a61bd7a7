import { SqlClient, SqlSchema } from "@effect/sql"
import { IntegrationId, QuoteId } from "@cop-integrations/contracts"
import { Effect, Schema } from "effect"

const QuoteRow = Schema.Struct({
  id: QuoteId,
  from_token: Schema.String,
  sell_rate: Schema.BigDecimal,
  mid_rate: Schema.BigDecimal,
  destination_cop: Schema.NullOr(Schema.BigDecimal),
  swap_sell_amount: Schema.NullOr(Schema.BigDecimal),
  expires_at: Schema.DateFromSelf
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
  created_at: Schema.DateFromSelf,
  expires_at: Schema.DateFromSelf
})

const Owned = Schema.Struct({ integrationId: IntegrationId, quoteId: QuoteId })

/** Quotes given to an integration; another integration's quote is simply not found. */
export class QuoteRepo extends Effect.Service<QuoteRepo>()("QuoteRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const findOwned = SqlSchema.findOne({
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
}) {}
