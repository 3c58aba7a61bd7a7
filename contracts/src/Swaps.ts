import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "./Auth.ts"
import { CreatePayoutHeaders, MockScenarioHeaders } from "./Breb.ts"
import {
  BadGatewayError,
  BadRequestError,
  ConflictError,
  IdempotencyKeyReusedError,
  NotFoundError,
  RequoteError,
  ServiceUnavailableError,
  TooManyRequestsError,
  TxHashReusedError
} from "./Errors.ts"
import { PrintableText } from "./Primitives.ts"
import { ConfirmSwapRequest, ListSwapsParams, PrepareSwapRequest, SwapIntent, SwapList } from "./Swap.ts"

const intentId = HttpApiSchema.param("intentId", PrintableText.pipe(Schema.maxLength(64)))

export class SwapsGroup extends HttpApiGroup.make("swaps")
  .add(
    HttpApiEndpoint.post("prepareSwap", "/")
      .setPayload(PrepareSwapRequest)
      .setHeaders(CreatePayoutHeaders)
      .addSuccess(SwapIntent, { status: 201 })
      .addError(IdempotencyKeyReusedError)
      .addError(ConflictError)
      .addError(ServiceUnavailableError)
      .addError(BadGatewayError)
      .annotate(OpenApi.Summary, "Prepare a swap")
  )
  .add(
    HttpApiEndpoint.get("getSwap")`/${intentId}`
      .addSuccess(SwapIntent)
      .addError(NotFoundError)
      .annotate(OpenApi.Summary, "Get a swap")
  )
  .add(
    HttpApiEndpoint.post("confirmSwap")`/${intentId}/confirm`
      .setPayload(ConfirmSwapRequest)
      .setHeaders(MockScenarioHeaders)
      .addSuccess(SwapIntent)
      .addError(NotFoundError)
      .addError(TxHashReusedError)
      .addError(RequoteError)
      .addError(ConflictError)
      .addError(ServiceUnavailableError)
      .annotate(OpenApi.Summary, "Confirm a swap")
  )
  .add(
    HttpApiEndpoint.get("listSwaps", "/")
      .setUrlParams(ListSwapsParams)
      .addSuccess(SwapList)
      .annotate(OpenApi.Summary, "List swaps for this integration")
  )
  .middleware(Authentication)
  .addError(BadRequestError)
  .addError(TooManyRequestsError)
  .prefix("/api/integrations/swaps")
  .annotate(OpenApi.Title, "Swaps")
{}
