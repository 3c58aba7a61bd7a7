import { HttpApiBuilder, HttpServerRequest } from "@effect/platform"
import { BadRequest, IntegrationsApi } from "@cop-integrations/contracts"
import { Effect, FiberRef, Option } from "effect"

export const mockScenarios = ["market_closed", "requote", "provider_unavailable"] as const
export type MockScenario = (typeof mockScenarios)[number]

const isMockScenario = (value: string): value is MockScenario => mockScenarios.some((scenario) => scenario === value)

/** The `X-Mock-Scenario` of the current request. Only MockScenarioLive sets it, and only mock mode installs that. */
export const currentMockScenario = FiberRef.unsafeMake<Option.Option<MockScenario>>(Option.none())

/** Whether the current request asked for `scenario`; read by the mock Layers (files named *Mock). */
export const isScenario = (scenario: MockScenario) =>
  Effect.map(FiberRef.get(currentMockScenario), Option.contains(scenario))

/** The probes take no input: a header never makes them fail. */
const isProbe = (url: string) => /^\/(healthz|readyz)(\?|$)/.test(url)

/**
 * API-level middleware of mock mode: runs each request with its `X-Mock-Scenario` in scope. An unknown value is
 * a 400 on any route but the health probes. Live mode does not install it, so there the header means nothing.
 */
export const MockScenarioLive = HttpApiBuilder.middleware(
  IntegrationsApi,
  (app) =>
    Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
      const header = request.headers["x-mock-scenario"]
      if (header === undefined || header.trim() === "" || isProbe(request.url)) return app // empty (API reference pages send one): none
      if (!isMockScenario(header)) {
        return Effect.fail(new BadRequest({ error: `x-mock-scenario must be one of ${mockScenarios.join(", ")}` }))
      }
      return Effect.locally(app, currentMockScenario, Option.some(header))
    })
)
