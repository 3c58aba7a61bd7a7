import { Effect, Layer } from "effect"
import { unlessUnavailable } from "../provider/mock/ProviderMock.ts"
import { RateCache } from "./RateCache.ts"

/**
 * Mock mode's rate cache: under `X-Mock-Scenario: provider_unavailable` a rate fails as the mock provider's calls do,
 * even when it is cached, so the scenario does not depend on the cache's state.
 */
export const RateCacheMock = Layer.effect(
  RateCache,
  Effect.map(RateCache, (cache) => RateCache.of({ usdCopRates: unlessUnavailable(cache.usdCopRates) }))
).pipe(Layer.provide(RateCache.Default))
