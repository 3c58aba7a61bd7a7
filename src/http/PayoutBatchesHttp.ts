import { CurrentIntegration, IntegrationsApi } from "@cop-integrations/contracts"
import { Effect } from "effect"
import { HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { BatchConfirm } from "../payouts/BatchConfirm.ts"
import { PayoutBatches } from "../payouts/PayoutBatches.ts"
import { answerConflicts } from "./Conflicts.ts"
import { answerCreated } from "./CreatedAnswer.ts"

export const PayoutBatchesHttpLive = HttpApiBuilder.group(
  IntegrationsApi,
  "payoutBatches",
  (handlers) =>
    Effect.gen(function*() {
      const batches = yield* PayoutBatches
      const confirmations = yield* BatchConfirm
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
        .handle("confirmPayoutBatch", ({ params, payload }) =>
          Effect.flatMap(CurrentIntegration, ({ integrationId }) =>
            confirmations.confirm({ integrationId, batchId: params.batchId, request: payload }).pipe(
              answerConflicts
            )))
        .handle("listPayoutBatches", ({ query }) =>
          Effect.flatMap(CurrentIntegration, ({ integrationId }) =>
            batches.list({
              integrationId,
              createdFrom: query.createdFrom,
              createdTo: query.createdTo,
              limit: query.limit,
              cursor: query.cursor
            })))
        .handle("getPayoutBatch", ({ params }) =>
          Effect.flatMap(
            CurrentIntegration,
            ({ integrationId }) =>
              Effect.map(batches.get(integrationId, params.batchId), (batch) =>
                HttpServerResponse.jsonUnsafe(batch))
          ))
    })
)
