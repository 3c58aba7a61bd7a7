import { CurrentIntegration, IntegrationsApi } from "@cop-integrations/contracts"
import { Effect } from "effect"
import { HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { PayoutBatches } from "../payouts/PayoutBatches.ts"
import { answerConflicts } from "./Conflicts.ts"
import { answerCreated } from "./CreatedAnswer.ts"

export const PayoutBatchesHttpLive = HttpApiBuilder.group(
  IntegrationsApi,
  "payoutBatches",
  (handlers) =>
    Effect.gen(function*() {
      const batches = yield* PayoutBatches
      return handlers
        .handle("createPayoutBatch", ({ headers, payload }) =>
          CurrentIntegration.pipe(
            Effect.flatMap(({ integrationId }) =>
              batches.create({ integrationId, request: payload, idempotencyKey: headers["idempotency-key"] }).pipe(
                answerConflicts
              )
            ),
            Effect.map(answerCreated)
          ))
        .handle("getPayoutBatch", ({ params }) =>
          Effect.flatMap(
            CurrentIntegration,
            ({ integrationId }) =>
              Effect.map(batches.get(integrationId, params.batchId), (batch) => HttpServerResponse.jsonUnsafe(batch))
          ))
    })
)
