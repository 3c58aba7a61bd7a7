import { Effect, Layer, Option } from "effect"
import { ApiKeyRepo } from "./ApiKeyRepo.ts"
import { DemoBootstrap } from "./Demo.ts"
import { IntegrationRepo } from "./IntegrationRepo.ts"

export const DEMO_INTEGRATION = "demo"

/**
 * Mock: on an empty database, create the `demo` integration and return its first test key, so `npm start` on a
 * fresh machine is usable at once. The key is returned (and shown) only then.
 */
export const DemoBootstrapMock = Layer.effect(
  DemoBootstrap,
  Effect.gen(function*() {
    const integrations = yield* IntegrationRepo
    const keys = yield* ApiKeyRepo
    return DemoBootstrap.of({
      run: Effect.gen(function*() {
        if (!(yield* integrations.isEmpty)) return Option.none<string>()
        const integration = yield* integrations.ensure(DEMO_INTEGRATION)
        const issued = yield* keys.issue(integration.id, "test")
        return Option.some(issued.key)
      })
    })
  })
)
