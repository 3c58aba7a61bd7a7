/**
 * The shared rate cache under concurrency, at the service level: a counting provider stands in for the
 * payout provider, and each "replica" is its own RateCache over the same fresh database.
 */
import type { SqlClient } from "effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { BigDecimal, ConfigProvider, Effect, Layer, Option, Ref, Result } from "effect"
import { AppConfig, AppConfigShape } from "../../src/config/Config.ts"
import { runMigrations } from "../../src/db/Migrations.ts"
import { currentMockScenario } from "../../src/base/MockScenario.ts"
import { PayoutProvider, ProviderUnavailable } from "../../src/provider/PayoutProvider.ts"
import { ProviderMock } from "../../src/provider/mock/ProviderMock.ts"
import { RateCache } from "../../src/quotes/RateCache.ts"
import { RateCacheMock } from "../../src/quotes/RateCacheMock.ts"
import { TestDatabaseLive } from "../support/database.ts"

const CONCURRENT_REQUESTS = 20
/** The provider answers slowly, so every concurrent miss (each first reads the cache row, slower under a loaded suite) is in flight at once. */
const PROVIDER_LATENCY = "600 millis"

const config = Layer.effect(
  AppConfig,
  Effect.provideService(AppConfigShape, ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env: {} }))
)
  .pipe(
    Layer.orDie
  )

const unused = () => Effect.die("not used by the rate cache")

/** A provider whose rate call is counted; `down` makes it fail as unavailable. */
const countingProvider = (calls: Ref.Ref<number>, down: Ref.Ref<boolean>) =>
  Layer.succeed(
    PayoutProvider,
    PayoutProvider.of({
      destinationsPerCustomer: false,
      usdCopRates: Ref.update(calls, (n) => n + 1).pipe(
        Effect.andThen(Effect.sleep(PROVIDER_LATENCY)),
        Effect.andThen(Ref.get(down)),
        Effect.flatMap((isDown) =>
          isDown
            ? Effect.fail(new ProviderUnavailable({ reason: "down" }))
            : Effect.succeed({
              sellRate: BigDecimal.fromStringUnsafe("3960.00"),
              midRate: BigDecimal.fromStringUnsafe("4000.00")
            })
        )
      ),
      createKycLink: unused,
      createExternalAccount: unused,
      getCustomerKyc: unused,
      getTransfer: unused,
      cancelTransfer: unused,
      createTransfer: unused
    })
  )

/** A replica's RateCache (RateCacheMock: mock mode's): its own instance (own process state) over the shared database. */
const replica = (
  provider: Layer.Layer<PayoutProvider, never, SqlClient.SqlClient>,
  cache: Layer.Layer<RateCache, never, SqlClient.SqlClient | PayoutProvider | AppConfig> = RateCache.Default
) => RateCache.pipe(Effect.provide(cache.pipe(Layer.provide(Layer.mergeAll(provider, config)))))

const concurrently = <A, E>(n: number, effect: Effect.Effect<A, E>) =>
  Effect.all(Array.from({ length: n }, () => Effect.result(effect)), { concurrency: "unbounded" })

describe("RateCache single flight", () => {
  it.live("concurrent misses in one process share one provider call", () =>
    Effect.gen(function*() {
      yield* runMigrations
      const calls = yield* Ref.make(0)
      const cache = yield* replica(countingProvider(calls, yield* Ref.make(false)))
      const results = yield* concurrently(CONCURRENT_REQUESTS, cache.usdCopRates)
      expect(yield* Ref.get(calls)).toBe(1)
      const rates = results.map((result) => Result.getOrThrow(result))
      expect(rates.filter((r) => !r.cached)).toHaveLength(1)
      expect(new Set(rates.map((r) => r.fetchedAt.getTime())).size).toBe(1)
    }).pipe(Effect.provide(TestDatabaseLive)), 60_000)

  it.live("concurrent misses on two replicas share one provider call (advisory lock)", () =>
    Effect.gen(function*() {
      yield* runMigrations
      const calls = yield* Ref.make(0)
      const provider = countingProvider(calls, yield* Ref.make(false))
      const [a, b] = [yield* replica(provider), yield* replica(provider)]
      const results = yield* Effect.all(
        [concurrently(CONCURRENT_REQUESTS / 2, a.usdCopRates), concurrently(CONCURRENT_REQUESTS / 2, b.usdCopRates)],
        { concurrency: "unbounded" }
      )
      expect(yield* Ref.get(calls)).toBe(1)
      expect(results.flat().every(Result.isSuccess)).toBe(true)
    }).pipe(Effect.provide(TestDatabaseLive)), 60_000)

  it.live(
    "a failed provider call is shared by the requests waiting on it, and not remembered",
    () =>
      Effect.gen(function*() {
        yield* runMigrations
        const calls = yield* Ref.make(0)
        const down = yield* Ref.make(true)
        const cache = yield* replica(countingProvider(calls, down))
        const failed = yield* concurrently(CONCURRENT_REQUESTS, cache.usdCopRates)
        expect(yield* Ref.get(calls)).toBe(1)
        expect(failed.map((result) => Result.isFailure(result) && result.failure._tag)).toEqual(
          Array.from({ length: CONCURRENT_REQUESTS }, () => "ProviderUnavailable")
        )
        yield* Ref.set(down, false)
        const recovered = yield* cache.usdCopRates
        expect(recovered.cached).toBe(false)
        expect(yield* Ref.get(calls)).toBe(2)
      }).pipe(Effect.provide(TestDatabaseLive)),
    60_000
  )
})

describe("RateCache in mock mode", () => {
  it.live("X-Mock-Scenario provider_unavailable applies while the cache is warm", () =>
    Effect.gen(function*() {
      yield* runMigrations
      const cache = yield* replica(ProviderMock.pipe(Layer.provide(config)), RateCacheMock)
      expect((yield* cache.usdCopRates).cached).toBe(false)
      expect((yield* cache.usdCopRates).cached).toBe(true)
      const down = yield* Effect.provideService(
        cache.usdCopRates,
        currentMockScenario,
        Option.some("provider_unavailable")
      )
        .pipe(Effect.flip)
      expect(down).toBeInstanceOf(ProviderUnavailable)
      expect((yield* cache.usdCopRates).cached).toBe(true)
    }).pipe(Effect.provide(TestDatabaseLive)), 60_000)
})
