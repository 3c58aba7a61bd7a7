import { Effect, FiberRef, Option } from "effect"
import { BadRequest } from "@cop-integrations/contracts"
import { AppConfig } from "./Config.ts"

export const mockScenarios = ["market_closed", "requote", "provider_unavailable"] as const
export type MockScenario = (typeof mockScenarios)[number]

const isMockScenario = (value: string): value is MockScenario => (mockScenarios as ReadonlyArray<string>).includes(value)

/** The `X-Mock-Scenario` of the current request; always none in live mode. */
export const currentMockScenario = FiberRef.unsafeMake<Option.Option<MockScenario>>(Option.none())

export const isScenario = (scenario: MockScenario) =>
  Effect.map(FiberRef.get(currentMockScenario), Option.contains(scenario))

/** Runs `effect` with the request's mock scenario in scope (mock mode only; live mode ignores the header). */
export const withMockScenario = (header: string | undefined) =>
<A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | BadRequest, R | AppConfig> =>
  Effect.flatMap(AppConfig, (config): Effect.Effect<A, E | BadRequest, R> => {
    if (config.mode !== "mock" || header === undefined) return effect
    if (!isMockScenario(header)) {
      return Effect.fail(
        new BadRequest({ error: `x-mock-scenario must be one of ${mockScenarios.join(", ")}` })
      )
    }
    return Effect.locally(effect, currentMockScenario, Option.some(header))
  })
