import { MOCK_SCENARIOS } from "@cop-integrations/contracts"
import { Context, Effect, Option } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"

/** The contract's list of `X-Mock-Scenario` values. */
export type MockScenario = (typeof MOCK_SCENARIOS)[number]

const isMockScenario = (value: string): value is MockScenario => MOCK_SCENARIOS.some((scenario) => scenario === value)

/** The `X-Mock-Scenario` of the current request. Only MockScenarioLive sets it, and only mock mode installs that. */
export const currentMockScenario = Context.Reference<Option.Option<MockScenario>>("MockScenario", {
  defaultValue: () => Option.none()
})

/** Whether the current request asked for `scenario`; read by the mock Layers (files named *Mock). */
export const isScenario = (scenario: MockScenario) => Effect.map(currentMockScenario, Option.contains(scenario))

/** The probes take no input: a header never makes them fail. */
const isProbe = (url: string) => /^\/(healthz|readyz)(\?|$)/.test(url)

/**
 * Router middleware of mock mode: runs each request with its `X-Mock-Scenario` in scope. An unknown value is a 400
 * ErrorBody on any route but the health probes. Live mode does not install it, so there the header means nothing.
 */
export const MockScenarioLive = HttpRouter.middleware(
  (app) =>
    Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
      const header = request.headers["x-mock-scenario"]
      if (header === undefined || header.trim() === "" || isProbe(request.url)) return app // empty (API reference pages send one): none
      if (!isMockScenario(header)) {
        // The contract's BadRequest body, written here: router middleware runs outside the API's error encoding.
        return Effect.succeed(
          HttpServerResponse.jsonUnsafe({ error: `x-mock-scenario must be one of ${MOCK_SCENARIOS.join(", ")}` }, {
            status: 400
          })
        )
      }
      return Effect.provideService(app, currentMockScenario, Option.some(header))
    }),
  { global: true }
)
