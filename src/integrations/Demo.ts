import { Effect, Option } from "effect"
import { ApiKeyRepo } from "../auth/ApiKeyRepo.ts"
import { AppConfig } from "../Config.ts"
import { IntegrationRepo } from "./IntegrationRepo.ts"

export const DEMO_INTEGRATION = "demo"

/**
 * Mock mode on an empty database: create the `demo` integration and return its first test key,
 * so `npm start` on a fresh machine is usable at once. The key is returned (and shown) only then.
 */
export const bootstrapDemo = Effect.gen(function*() {
  const config = yield* AppConfig
  const integrations = yield* IntegrationRepo
  if (config.mode !== "mock" || !(yield* integrations.isEmpty)) return Option.none<string>()
  const integration = yield* integrations.ensure(DEMO_INTEGRATION)
  const keys = yield* ApiKeyRepo
  const issued = yield* keys.issue(integration.id, "test")
  return Option.some(issued.key)
})
