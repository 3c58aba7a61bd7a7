import { SqlClient } from "effect/sql"
import { Context, Effect, Layer, Option } from "effect"
import { AppConfig } from "../config/Config.ts"
import { now } from "../base/Clock.ts"
import { singleFlight } from "../base/SingleFlight.ts"
import { PayoutProvider, type ProviderFailure, type UsdCopRates } from "../provider/PayoutProvider.ts"
import { PAIR, RateRepo, type RateRow } from "./RateRepo.ts"

export interface CachedRates extends UsdCopRates {
  readonly cached: boolean
  readonly fetchedAt: Date
}

/**
 * The provider's USD/COP rate, cached in PostgreSQL (one row per pair) so every replica shares it, and kept in this
 * process until the same expiry (RATE_CACHE_IN_MEMORY, default on), so a fresh rate costs no round trip. The copy
 * only ever holds a row the database had, and is dropped at the row's own expiry: a replica never serves a rate
 * the shared cache would not. (Off: every request reads the row; for an operator who edits the row by hand.)
 * `cached: false` for the one call that went to the provider. A miss is refreshed once: concurrent misses in
 * a process share one refresh (single flight), and replicas take turns on a transaction-scoped advisory lock,
 * so whoever waited finds the fresh row instead of calling the provider again.
 */
export class RateCache extends Context.Service<RateCache>()("RateCache", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* RateRepo
    const provider = yield* PayoutProvider
    const config = yield* AppConfig

    const ttlMs = config.rateCacheTtlSeconds * 1000
    let remembered: CachedRates | undefined

    const remember = (rates: CachedRates) =>
      Effect.sync(() => {
        if (config.rateCacheInMemory && (remembered === undefined || rates.fetchedAt >= remembered.fetchedAt)) {
          remembered = { ...rates, cached: true }
        }
      })

    const inMemory = Effect.map(
      now,
      (at) => remembered !== undefined && remembered.fetchedAt.getTime() > at.getTime() - ttlMs ? remembered : undefined
    )

    const freshRow = Effect.flatMap(now, (at) => rows.findFresh(new Date(at.getTime() - ttlMs)))

    const fromRow = (row: RateRow): CachedRates => ({
      sellRate: row.sell_rate,
      midRate: row.mid_rate,
      cached: true,
      fetchedAt: row.fetched_at
    })

    const refresh = Effect.gen(function*() {
      yield* rows.lockRefresh
      const fresh = yield* freshRow
      if (Option.isSome(fresh)) return fromRow(fresh.value)
      const at = yield* now
      const rates = yield* provider.usdCopRates
      yield* rows.store(rates, at)
      return { ...rates, cached: false, fetchedAt: at } satisfies CachedRates
    }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die), Effect.tap(remember))

    const sharedRefresh = singleFlight({ key: () => PAIR, run: () => refresh, whenStarterInterrupted: "handOver" })

    const usdCopRates: Effect.Effect<CachedRates, ProviderFailure> = Effect.gen(function*() {
      const local = yield* inMemory
      if (local !== undefined) return local
      const fresh = yield* freshRow
      if (Option.isSome(fresh)) {
        const rates = fromRow(fresh.value)
        yield* remember(rates)
        return rates
      }
      const flight = yield* sharedRefresh()
      // Only the call that ran the refresh reports the provider's answer as its own.
      return flight.leader ? flight.value : { ...flight.value, cached: true }
    })

    return { usdCopRates } as const
  })
}) {
  static readonly Default = Layer.effect(this, this.make).pipe(Layer.provide(RateRepo.Default))
}
