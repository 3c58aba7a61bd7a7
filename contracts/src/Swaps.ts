import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Authentication } from "./Auth.ts"
import { CreatePayoutHeaders, groupErrors, MockScenarioHeaders } from "./Breb.ts"
import {
  BadGatewayError,
  BelowMinimumError,
  ConflictError,
  IdempotencyKeyReusedError,
  NotFoundError,
  RequoteError,
  ServiceUnavailableError,
  TxHashReusedError
} from "./Errors.ts"
import { atMost, PrintableText } from "./Primitives.ts"
import { ConfirmSwapRequest, ListSwapsParams, PrepareSwapRequest, SwapIntent, SwapList } from "./Swap.ts"

const IntentIdParam = PrintableText.check(atMost(64)).annotate({
  description: "The swap intent's id (`sw_…`)"
}).pipe(Schema.brand("SwapId"))

export class SwapsGroup extends HttpApiGroup.make("swaps")
  .add(
    HttpApiEndpoint.post("prepareSwap", "/", {
      payload: PrepareSwapRequest,
      headers: CreatePayoutHeaders,
      success: SwapIntent.pipe(HttpApiSchema.status(201)),
      error: [
        ...groupErrors,
        IdempotencyKeyReusedError,
        BelowMinimumError,
        ConflictError,
        ServiceUnavailableError,
        BadGatewayError
      ]
    })
      .annotate(OpenApi.Summary, "Prepare a swap")
      .annotate(
        OpenApi.Description,
        "Quotes a swap between USDC and the COP stablecoin COPm through the swap router and returns the approval and swap transactions for the user to sign. `Idempotency-Key` as for payouts. An `amountIn` below the token's minimum (1 COPm) is 409 `below_minimum`."
      ),
    HttpApiEndpoint.get("getSwap", "/:intentId", {
      params: { intentId: IntentIdParam },
      success: SwapIntent,
      error: [...groupErrors, NotFoundError]
    })
      .annotate(OpenApi.Summary, "Get a swap")
      .annotate(OpenApi.Description, "One swap intent of this integration (another integration's is 404)."),
    HttpApiEndpoint.post("confirmSwap", "/:intentId/confirm", {
      params: { intentId: IntentIdParam },
      payload: ConfirmSwapRequest,
      headers: MockScenarioHeaders,
      success: SwapIntent,
      error: [...groupErrors, NotFoundError, TxHashReusedError, RequoteError, ConflictError, ServiceUnavailableError]
    })
      .annotate(OpenApi.Summary, "Confirm a swap")
      .annotate(
        OpenApi.Description,
        "Reports the hash of the swap transaction the user sent; it is verified onchain. The same hash again returns the intent unchanged; a hash already used by a payout or swap is 409 `tx_hash_reused`; after the intent expired it is 409 `requote`. Mock mode has no chain: there the example hash stands for a swap the mock chain mines for this intent, so it confirms any swap, for every integration, recorded as a `txHash` of its own (derived from the example and the `intentId`); any other hash is recorded as sent."
      ),
    HttpApiEndpoint.get("listSwaps", "/", {
      query: ListSwapsParams,
      success: SwapList,
      error: groupErrors
    })
      .annotate(OpenApi.Summary, "List swaps for this integration")
      .annotate(
        OpenApi.Description,
        "Oldest first (`createdAt`, then `intentId`), keyset-paginated and safe to follow like payouts. Filters combine (all must hold): `createdFrom` and `createdTo` (a range of `createdAt`) and `status` (matched when each page is read, as for payouts). A `nextCursor` returned for a list filtered by `createdTo` or `status` continues that list only: pass it with the same filters (`createdFrom` included), else 400 naming `cursor`."
      )
  )
  .middleware(Authentication)
  .prefix("/api/integrations/swaps")
  .annotate(OpenApi.Title, "Swaps")
  .annotate(
    OpenApi.Description,
    "Onchain swaps between USDC and the COP stablecoin COPm: the service prepares the router transactions, the user signs them in their own wallet."
  )
{}
