import { Effect, Layer } from "effect"
import { isScenario } from "../base/MockScenario.ts"
import { ProviderUnavailable } from "../provider/PayoutProvider.ts"
import { CachedRateGate } from "./RateCache.ts"

/** Mock mode: `X-Mock-Scenario: provider_unavailable` fails a quote even when the rate is cached. */
export const RateCacheMock = Layer.succeed(CachedRateGate, {
  check: Effect.flatMap(isScenario("provider_unavailable"), (down) =>
    down ? Effect.fail(new ProviderUnavailable({ reason: "mock scenario provider_unavailable" })) : Effect.void)
})
