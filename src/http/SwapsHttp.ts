import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { CurrentIntegration, IntegrationsApi } from "@cop-integrations/contracts"
import { Effect } from "effect"
import { SwapService } from "../swaps/SwapService.ts"

export const SwapsHttpLive = HttpApiBuilder.group(IntegrationsApi, "swaps", (handlers) =>
  Effect.gen(function*() {
    const swaps = yield* SwapService

    return handlers
      .handle("prepareSwap", ({ headers, payload }) =>
        CurrentIntegration.pipe(
          Effect.flatMap(({ integrationId }) =>
            swaps.create({ integrationId, request: payload, idempotencyKey: headers["idempotency-key"] })
          ),
          // The stored body is returned as is, so a replay is byte-for-byte the first response.
          Effect.map((outcome) =>
            HttpServerResponse.unsafeJson(outcome.body, {
              status: outcome.status,
              headers: outcome.replayed ? { "idempotent-replayed": "true" } : {}
            })
          )
        ))
      .handle("getSwap", ({ path }) =>
        Effect.flatMap(CurrentIntegration, ({ integrationId }) => swaps.get(integrationId, path.intentId)))
      .handle("confirmSwap", ({ path, payload }) =>
        Effect.flatMap(CurrentIntegration, ({ integrationId }) =>
          swaps.confirm({ integrationId, intentId: path.intentId, request: payload })))
      .handle("listSwaps", ({ urlParams }) =>
        Effect.flatMap(CurrentIntegration, ({ integrationId }) =>
          swaps.list({
            integrationId,
            createdFrom: urlParams.createdFrom,
            limit: urlParams.limit,
            cursor: urlParams.cursor
          })))
  }))
