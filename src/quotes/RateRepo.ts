import { SqlClient, SqlSchema } from "effect/sql"
import { BigDecimal, Context, Effect, Layer, Schema } from "effect"
import type { UsdCopRates } from "../provider/PayoutProvider.ts"

export const PAIR = "USD_COP"

const BigDecimalFromText = Schema.BigDecimalFromString

const RateRow = Schema.Struct({
  sell_rate: BigDecimalFromText,
  mid_rate: BigDecimalFromText,
  fetched_at: Schema.Date
})
export type RateRow = typeof RateRow.Type

const StoredRates = Schema.Struct({ sellRate: Schema.String, midRate: Schema.String, fetchedAt: Schema.Date })

/** The shared USD/COP rate cache: one row per pair, read by every replica. */
export class RateRepo extends Context.Service<RateRepo>()("RateRepo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const findFresh = SqlSchema.findOneOption({
      Request: Schema.Date,
      Result: RateRow,
      execute: (freshAfter) =>
        sql`SELECT sell_rate, mid_rate, fetched_at FROM rate_cache WHERE pair = ${PAIR} AND fetched_at > ${freshAfter}`
    })

    const store = SqlSchema.void({
      Request: StoredRates,
      execute: ({ fetchedAt, midRate, sellRate }) =>
        sql`INSERT INTO rate_cache (pair, sell_rate, mid_rate, fetched_at)
          VALUES (${PAIR}, ${sellRate}, ${midRate}, ${fetchedAt})
          ON CONFLICT (pair) DO UPDATE
          SET sell_rate = EXCLUDED.sell_rate, mid_rate = EXCLUDED.mid_rate, fetched_at = EXCLUDED.fetched_at`
    })

    /** Replicas refreshing the pair take turns on this transaction-scoped lock. */
    const lockRefresh = SqlSchema.void({
      Request: Schema.Void,
      execute: () => sql`SELECT pg_advisory_xact_lock(hashtext(${`rate_cache:${PAIR}`}))`
    })

    return {
      /** The row, if it was fetched after `freshAfter`. */
      findFresh: (freshAfter: Date) => findFresh(freshAfter).pipe(Effect.orDie),
      store: (rates: UsdCopRates, fetchedAt: Date) =>
        store({ sellRate: BigDecimal.format(rates.sellRate), midRate: BigDecimal.format(rates.midRate), fetchedAt })
          .pipe(
            Effect.orDie
          ),
      lockRefresh: lockRefresh(undefined).pipe(Effect.orDie)
    } as const
  })
}) {
  static readonly Default = Layer.effect(this, this.make)
}
