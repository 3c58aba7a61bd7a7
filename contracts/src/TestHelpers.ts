import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { Authentication } from "./Auth.ts"
import { groupErrors } from "./Breb.ts"
import { ConflictError, NotFoundError } from "./Errors.ts"
import { AdvancePayoutRequest, TriggeredEvent, TriggerEventRequest } from "./Event.ts"
import { KycCustomer } from "./Kyc.ts"
import { Payout } from "./Payout.ts"
import { Address, atMost, PrintableText, unnamed } from "./Primitives.ts"
import { SwapIntent } from "./Swap.ts"

const PayoutIdParam = PrintableText.check(atMost(64)).annotate({
  description: "The payout's id (`po_…`)"
}).pipe(Schema.brand("PayoutId"))

const IntentIdParam = PrintableText.check(atMost(64)).annotate({
  description: "The swap intent's id (`sw_…`)"
}).pipe(Schema.brand("SwapId"))

const UserAddressParam = unnamed(Address, { description: "The customer's wallet address" })

/** Sandbox only: produce every outcome on demand. A live deployment answers 404. */
export class TestHelpersGroup extends HttpApiGroup.make("testHelpers")
  .add(
    HttpApiEndpoint.post("advancePayout", "/payouts/:payoutId/advance", {
      params: { payoutId: PayoutIdParam },
      payload: AdvancePayoutRequest,
      success: Payout,
      error: [...groupErrors, NotFoundError, ConflictError]
    })
      .annotate(OpenApi.Summary, "Move a payout forward (mock mode only)")
      .annotate(
        OpenApi.Description,
        "Moves a payout to a later status through the same state machine and events as the provider's webhooks (never backwards: 409). 404 in live mode."
      ),
    HttpApiEndpoint.post("expirePayout", "/payouts/:payoutId/expire", {
      params: { payoutId: PayoutIdParam },
      success: Payout,
      error: [...groupErrors, NotFoundError, ConflictError]
    })
      .annotate(OpenApi.Summary, "Close a payout's deposit window now (mock mode only)")
      .annotate(
        OpenApi.Description,
        "Moves an `awaiting_deposit` payout's `expiresAt` to now and runs the expiry sweep, which expires it as it would at the end of its window (`payout.expired`). Any other status is 409. 404 in live mode."
      ),
    HttpApiEndpoint.post("delayPayout", "/payouts/:payoutId/delay", {
      params: { payoutId: PayoutIdParam },
      success: Payout,
      error: [...groupErrors, NotFoundError, ConflictError]
    })
      .annotate(OpenApi.Summary, "Make a payout late now (mock mode only)")
      .annotate(
        OpenApi.Description,
        "Makes a `deposit_confirmed` or `processing` payout look unchanged for longer than the delay threshold and runs the delay sweep, which reports it as it would a stuck one (`delayed` hop, `payout.delayed`, once in its life: a payout already reported is 409, as is any other status). 404 in live mode."
      ),
    HttpApiEndpoint.post("expireSwap", "/swaps/:intentId/expire", {
      params: { intentId: IntentIdParam },
      success: SwapIntent,
      error: [...groupErrors, NotFoundError, ConflictError]
    })
      .annotate(OpenApi.Summary, "Expire a swap's quote now (mock mode only)")
      .annotate(
        OpenApi.Description,
        "Moves a `prepared` swap's `expiresAt` to now and runs the expiry sweep, which expires it (`swap.expired`). Any other status is 409. 404 in live mode."
      ),
    HttpApiEndpoint.post("triggerEvent", "/events/trigger", {
      payload: TriggerEventRequest,
      success: TriggeredEvent,
      error: [...groupErrors, NotFoundError, ConflictError]
    })
      .annotate(OpenApi.Summary, "Produce one event of a type (mock mode only)")
      .annotate(
        OpenApi.Description,
        "Like `stripe trigger`: creates what the event needs in this integration (a KYC-approved customer, a payout, a swap) and drives it through the same state machine, sweeps and events as the real thing until it produces one event of `type`; answers that event's id. `endpoint.ping` pings this integration's first enabled webhook endpoint (409 when it has none). 404 in live mode."
      ),
    HttpApiEndpoint.post("rejectKyc", "/kyc/:userAddress/reject", {
      params: { userAddress: UserAddressParam },
      success: KycCustomer,
      error: [...groupErrors, NotFoundError, ConflictError]
    })
      .annotate(OpenApi.Summary, "Reject a customer's KYC (mock mode only)")
      .annotate(OpenApi.Description, "Marks a customer's KYC as rejected, emitting `kyc.rejected`. 404 in live mode.")
  )
  .middleware(Authentication)
  .prefix("/api/integrations/test-helpers")
  .annotate(OpenApi.Title, "Test helpers")
  .annotate(
    OpenApi.Description,
    "Mock mode only (404 in live mode): drive payouts and KYC through the same state machine and events as the provider's webhooks, fail or refund a payout with a documented `failureCode`, make time pass (a deposit window or a swap quote expiring, a payout delayed) through the service's own sweeps, and produce one event of any type on request (`events/trigger`)."
  )
{}
