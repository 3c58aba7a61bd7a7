import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "./Auth.ts"
import { CreatePayoutHeaders, MockScenarioHeaders } from "./Breb.ts"
import {
  BadGatewayError,
  BadRequestError,
  BelowMinimumError,
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

const intentId = HttpApiSchema.param(
  "intentId",
  PrintableText.pipe(Schema.maxLength(64), Schema.brand("SwapId")).annotations({
    description: "The swap intent's id (`sw_…`)"
  })
)

export class SwapsGroup extends HttpApiGroup.make("swaps")
  .add(
    HttpApiEndpoint.post("prepareSwap", "/")
      .setPayload(PrepareSwapRequest)
      .setHeaders(CreatePayoutHeaders)
      .addSuccess(SwapIntent, { status: 201 })
      .addError(IdempotencyKeyReusedError)
      .addError(BelowMinimumError)
      .addError(ConflictError)
      .addError(ServiceUnavailableError)
      .addError(BadGatewayError)
      .annotate(OpenApi.Summary, "Prepare a swap")
      .annotate(
        OpenApi.Description,
        "Quotes a swap between USDC and the COP stablecoin COPm through the swap router and returns the approval and swap transactions for the user to sign. `Idempotency-Key` as for payouts. An `amountIn` below the token's minimum (1 COPm) is 409 `below_minimum`."
      )
  )
  .add(
    HttpApiEndpoint.get("getSwap")`/${intentId}`
      .addSuccess(SwapIntent)
      .addError(NotFoundError)
      .annotate(OpenApi.Summary, "Get a swap")
      .annotate(OpenApi.Description, "One swap intent of this integration (another integration's is 404).")
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
      .annotate(
        OpenApi.Description,
        "Reports the hash of the swap transaction the user sent; it is verified onchain. The same hash again returns the intent unchanged; a hash already used by a payout or swap is 409 `tx_hash_reused`; after the intent expired it is 409 `requote`."
      )
  )
  .add(
    HttpApiEndpoint.get("listSwaps", "/")
      .setUrlParams(ListSwapsParams)
      .addSuccess(SwapList)
      .annotate(OpenApi.Summary, "List swaps for this integration")
      .annotate(OpenApi.Description, "Oldest first, keyset-paginated like payouts.")
  )
  .middleware(Authentication)
  .addError(BadRequestError)
  .addError(TooManyRequestsError)
  .prefix("/api/integrations/swaps")
  .annotate(OpenApi.Title, "Swaps")
  .annotate(
    OpenApi.Description,
    "Onchain swaps between USDC and the COP stablecoin COPm: the service prepares the router transactions, the user signs them in their own wallet."
  )
{}
