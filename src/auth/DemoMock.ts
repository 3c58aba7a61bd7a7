import { Effect, Layer, Option } from "effect"
import { ApiKeyRepo } from "./ApiKeyRepo.ts"
import { DemoBootstrap, type DemoAccess } from "./Demo.ts"
import { IntegrationRepo } from "./IntegrationRepo.ts"

export const DEMO_INTEGRATION = "demo"

/**
 * Mock: on an empty database, create the `demo` integration and return its first test key, so `npm start` on a
 * fresh machine is usable at once. The key is returned (and shown) only then; later starts name the demo integration
 * and its newest active key (for a dashboard sign-in link), if it still has one.
 */
export const DemoBootstrapMock = Layer.effect(
  DemoBootstrap,
  Effect.gen(function*() {
    const integrations = yield* IntegrationRepo
    const keys = yield* ApiKeyRepo
    return DemoBootstrap.of({
      run: Effect.gen(function*() {
        if (yield* integrations.isEmpty) {
          const integration = yield* integrations.ensure(DEMO_INTEGRATION)
          const issued = yield* keys.issue(integration.id, "test")
          return Option.some<DemoAccess>({
            integrationId: integration.id,
            name: integration.name,
            keyId: issued.id,
            key: Option.some(issued.key)
          })
        }
        const integration = yield* integrations.findByName(DEMO_INTEGRATION)
        if (Option.isNone(integration)) return Option.none()
        const key = yield* keys.newestActiveOf(integration.value.id)
        return Option.map(key, (row): DemoAccess => ({
          integrationId: row.integration_id,
          name: row.integration_name,
          keyId: row.id,
          key: Option.none()
        }))
      })
    })
  })
)
