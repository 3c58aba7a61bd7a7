import { SqlClient, SqlSchema } from "@effect/sql"
import { BigDecimal, Context, Effect, Option, Schema } from "effect"
import { AppConfig } from "../config/Config.ts"
import { now } from "../base/Clock.ts"
import { PayoutProvider, type ProviderFailure, type ProviderUnavailable, type UsdCopRates } from "../provider/PayoutProvider.ts"
import { singleFlight } from "../base/SingleFlight.ts"

const PAIR = "USD_COP"

const BigDecimalFromText = Schema.BigDecimal

const RateRow = Schema.Struct({
  sell_rate: BigDecimalFromText,
  mid_rate: BigDecimalFromText,
  fetched_at: Schema.DateFromSelf
})
type RateRow = typeof RateRow.Type

export interface CachedRates extends UsdCopRates {
  readonly cached: boolean
  readonly fetchedAt: Date
}

/**
 * Runs before a cached rate is served. By default nothing: a cached rate needs no provider. The mock
 * Layers replace it (RateCacheMock), so the `provider_unavailable` scenario applies with a warm cache too.
 */
export class CachedRateGate extends Context.Reference<CachedRateGate>()("CachedRateGate", {
  defaultValue: (): { readonly check: Effect.Effect<void, ProviderUnavailable> } => ({ check: Effect.void })
}) {}

/**
 * The provider's USD/COP rate, cached in PostgreSQL (one row per pair) so every replica shares it, and kept in this
 * process until the same expiry (RATE_CACHE_IN_MEMORY, default on), so a fresh rate costs no round trip. The copy
 * only ever holds a row the database had, and is dropped at the row's own expiry: a replica never serves a rate
 * the shared cache would not. (Off: every request reads the row; for an operator who edits the row by hand.)
 * `cached: false` for the one call that went to the provider. A miss is refreshed once: concurrent misses in
 * a process share one refresh (single flight), and replicas take turns on a transaction-scoped advisory lock,
 * so whoever waited finds the fresh row instead of calling the provider again.
 */
export class RateCache extends Effect.Service<RateCache>()("RateCache", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const provider = yield* PayoutProvider
    const config = yield* AppConfig
    const gate = yield* CachedRateGate

    const findFresh = SqlSchema.findOne({
      Request: Schema.DateFromSelf,
      Result: RateRow,
      execute: (freshAfter) =>
        sql`SELECT sell_rate, mid_rate, fetched_at FROM rate_cache WHERE pair = ${PAIR} AND fetched_at > ${freshAfter}`
    })

    const ttlMs = config.rateCacheTtlSeconds * 1000
    let remembered: CachedRates | undefined

    const remember = (rates: CachedRates) =>
      Effect.sync(() => {
        if (config.rateCacheInMemory && (remembered === undefined || rates.fetchedAt >= remembered.fetchedAt)) {
          remembered = { ...rates, cached: true }
        }
      })

    const inMemory = Effect.map(now, (at) =>
      remembered !== undefined && remembered.fetchedAt.getTime() > at.getTime() - ttlMs ? remembered : undefined)

    const freshRow = Effect.flatMap(now, (at) => findFresh(new Date(at.getTime() - ttlMs)).pipe(Effect.orDie))

    const fromRow = (row: RateRow): CachedRates => ({
      sellRate: row.sell_rate,
      midRate: row.mid_rate,
      cached: true,
      fetchedAt: row.fetched_at
    })

    const store = (rates: UsdCopRates, fetchedAt: Date) =>
      sql`INSERT INTO rate_cache (pair, sell_rate, mid_rate, fetched_at)
          VALUES (${PAIR}, ${BigDecimal.format(rates.sellRate)}, ${BigDecimal.format(rates.midRate)}, ${fetchedAt})
          ON CONFLICT (pair) DO UPDATE
          SET sell_rate = EXCLUDED.sell_rate, mid_rate = EXCLUDED.mid_rate, fetched_at = EXCLUDED.fetched_at`

    const refresh = Effect.gen(function*() {
      yield* sql`SELECT pg_advisory_xact_lock(hashtext(${`rate_cache:${PAIR}`}))`
      const fresh = yield* freshRow
      if (Option.isSome(fresh)) return fromRow(fresh.value)
      const at = yield* now
      const rates = yield* provider.usdCopRates
      yield* store(rates, at)
      return { ...rates, cached: false, fetchedAt: at } satisfies CachedRates
    }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die), Effect.tap(remember))

    const sharedRefresh = singleFlight({ key: () => PAIR, run: () => refresh, whenStarterInterrupted: "handOver" })

    const usdCopRates: Effect.Effect<CachedRates, ProviderFailure> = Effect.gen(function*() {
      const local = yield* inMemory
      if (local !== undefined) return yield* Effect.as(gate.check, local)
      const fresh = yield* freshRow
      if (Option.isSome(fresh)) {
        const rates = fromRow(fresh.value)
        yield* remember(rates)
        return yield* Effect.as(gate.check, rates)
      }
      const flight = yield* sharedRefresh()
      // Only the call that ran the refresh reports the provider's answer as its own.
      return flight.leader ? flight.value : { ...flight.value, cached: true }
    })

    return { usdCopRates } as const
  })
}) {}
