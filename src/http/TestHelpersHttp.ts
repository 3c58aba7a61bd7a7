import { HttpApiBuilder } from "effect/http-api"
import { CurrentIntegration, IntegrationsApi } from "@cop-integrations/contracts"
import { Effect, Layer } from "effect"
import { TEST_HELPERS_ABSENT, TestHelpers } from "../testHelpers/TestHelpers.ts"
import { answerConflicts } from "./Conflicts.ts"
import { UnservedPaths } from "./UnservedPaths.ts"

const TEST_HELPERS_PATH = "/api/integrations/test-helpers"

export const TestHelpersHttpLive = HttpApiBuilder.group(
  IntegrationsApi,
  "testHelpers",
  (handlers) =>
    Effect.gen(function*() {
      const helpers = yield* TestHelpers
      return handlers
        .handle(
          "advancePayout",
          ({ params, payload }) =>
            Effect.flatMap(CurrentIntegration, ({ integrationId }) =>
              helpers.advancePayout(integrationId, params.payoutId, payload))
        )
        .handle(
          "expirePayout",
          ({ params }) =>
            Effect.flatMap(CurrentIntegration, ({ integrationId }) =>
              helpers.expirePayout(integrationId, params.payoutId))
        )
        .handle(
          "delayPayout",
          ({ params }) =>
            Effect.flatMap(CurrentIntegration, ({ integrationId }) =>
              helpers.delayPayout(integrationId, params.payoutId))
        )
        .handle(
          "expireSwap",
          ({ params }) =>
            Effect.flatMap(CurrentIntegration, ({ integrationId }) =>
              helpers.expireSwap(integrationId, params.intentId))
        )
        .handle(
          "triggerEvent",
          ({ payload }) =>
            Effect.flatMap(CurrentIntegration, ({ integrationId }) =>
              answerConflicts(helpers.triggerEvent(integrationId, payload.type)))
        )
        .handle(
          "rejectKyc",
          ({ params }) =>
            Effect.flatMap(CurrentIntegration, ({ integrationId }) =>
              helpers.rejectKyc(integrationId, params.userAddress))
        )
    })
)

/**
 * Where the helpers are not served (live), everything under their path is the same 404 before any other check: a
 * 400 for a bad body, a 401, a 405, a 413 or a 415 there would tell a prober that the routes exist.
 */
export const TestHelpersUnservedLive = Layer.effect(
  UnservedPaths,
  Effect.map(
    TestHelpers,
    (helpers) => (helpers.served ? [] : [{ prefix: TEST_HELPERS_PATH, error: TEST_HELPERS_ABSENT }])
  )
)
