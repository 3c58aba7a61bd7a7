import { SqlClient, SqlSchema } from "@effect/sql"
import { BigDecimal, Effect, Option, Schema } from "effect"
import { AppConfig } from "../Config.ts"
import { now } from "../Clock.ts"
import { PayoutProvider, type UsdCopRates } from "../provider/PayoutProvider.ts"

const PAIR = "USD_COP"

const BigDecimalFromText = Schema.BigDecimal

const RateRow = Schema.Struct({
  sell_rate: BigDecimalFromText,
  mid_rate: BigDecimalFromText,
  fetched_at: Schema.DateFromSelf
})

export interface CachedRates extends UsdCopRates {
  readonly cached: boolean
  readonly fetchedAt: Date
}

/**
 * The provider's USD/COP rate, cached in PostgreSQL (one row per pair) so every replica shares it.
 * `cached: false` when this call went to the provider.
 */
export class RateCache extends Effect.Service<RateCache>()("RateCache", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const provider = yield* PayoutProvider
    const config = yield* AppConfig

    const findFresh = SqlSchema.findOne({
      Request: Schema.DateFromSelf,
      Result: RateRow,
      execute: (freshAfter) =>
        sql`SELECT sell_rate, mid_rate, fetched_at FROM rate_cache WHERE pair = ${PAIR} AND fetched_at > ${freshAfter}`
    })

    const store = (rates: UsdCopRates, fetchedAt: Date) =>
      sql`INSERT INTO rate_cache (pair, sell_rate, mid_rate, fetched_at)
          VALUES (${PAIR}, ${BigDecimal.format(rates.sellRate)}, ${BigDecimal.format(rates.midRate)}, ${fetchedAt})
          ON CONFLICT (pair) DO UPDATE
          SET sell_rate = EXCLUDED.sell_rate, mid_rate = EXCLUDED.mid_rate, fetched_at = EXCLUDED.fetched_at`

    const usdCopRates = Effect.gen(function*() {
      const at = yield* now
      const fresh = yield* findFresh(new Date(at.getTime() - config.rateCacheTtlSeconds * 1000)).pipe(Effect.orDie)
      if (Option.isSome(fresh)) {
        const row = fresh.value
        return { sellRate: row.sell_rate, midRate: row.mid_rate, cached: true, fetchedAt: row.fetched_at } satisfies CachedRates
      }
      const rates = yield* provider.usdCopRates
      yield* store(rates, at).pipe(Effect.orDie)
      return { ...rates, cached: false, fetchedAt: at } satisfies CachedRates
    })

    return { usdCopRates } as const
  })
}) {}
