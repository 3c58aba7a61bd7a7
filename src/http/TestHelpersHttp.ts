import { HttpApiBuilder } from "@effect/platform"
import { CurrentIntegration, IntegrationsApi } from "@cop-integrations/contracts"
import { Effect } from "effect"
import { TestHelpers } from "../testHelpers/TestHelpers.ts"

export const TestHelpersHttpLive = HttpApiBuilder.group(IntegrationsApi, "testHelpers", (handlers) =>
  Effect.gen(function*() {
    const helpers = yield* TestHelpers
    return handlers
      .handle("advancePayout", ({ path, payload }) =>
        Effect.flatMap(CurrentIntegration, ({ integrationId }) => helpers.advancePayout(integrationId, path.payoutId, payload.to)))
      .handle("rejectKyc", ({ path }) =>
        Effect.flatMap(CurrentIntegration, ({ integrationId }) => helpers.rejectKyc(integrationId, path.userAddress)))
  }))
