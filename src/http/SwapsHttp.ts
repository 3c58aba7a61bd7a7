import { HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { CurrentIntegration, IntegrationsApi } from "@cop-integrations/contracts"
import { Effect } from "effect"
import { SwapService } from "../swaps/SwapService.ts"
import { answerConflicts } from "./Conflicts.ts"

export const SwapsHttpLive = HttpApiBuilder.group(IntegrationsApi, "swaps", (handlers) =>
  Effect.gen(function*() {
    const swaps = yield* SwapService

    return handlers
      .handle("prepareSwap", ({ headers, payload }) =>
        CurrentIntegration.pipe(
          Effect.flatMap(({ integrationId }) =>
            swaps.create({ integrationId, request: payload, idempotencyKey: headers["idempotency-key"] }).pipe(
              answerConflicts
            )
          ),
          // The stored body is returned as is, so a replay is byte-for-byte the first response.
          Effect.map((outcome) =>
            HttpServerResponse.jsonUnsafe(outcome.body, {
              status: outcome.status,
              headers: outcome.replayed ? { "idempotent-replayed": "true" } : {}
            })
          )
        ))
      .handle("getSwap", ({ params }) =>
        Effect.flatMap(CurrentIntegration, ({ integrationId }) =>
          swaps.get(integrationId, params.intentId)))
      .handle("confirmSwap", ({ params, payload }) =>
        Effect.flatMap(CurrentIntegration, ({ integrationId }) =>
          swaps.confirm({ integrationId, intentId: params.intentId, request: payload }).pipe(answerConflicts)))
      .handle("listSwaps", ({ query }) =>
        Effect.flatMap(CurrentIntegration, ({ integrationId }) =>
          swaps.list({
            integrationId,
            createdFrom: query.createdFrom,
            createdTo: query.createdTo,
            status: query.status,
            limit: query.limit,
            cursor: query.cursor
          })))
  }))
