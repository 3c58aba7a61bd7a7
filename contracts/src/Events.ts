import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Authentication } from "./Auth.ts"
import { groupErrors } from "./Breb.ts"
import { ConflictError, NotFoundError } from "./Errors.ts"
import {
  AdvancePayoutRequest,
  CreateWebhookEndpointRequest,
  EventList,
  EventWithAttempts,
  ListEventsParams,
  PingEvent,
  Redelivery,
  TriggeredEvent,
  TriggerEventRequest,
  WebhookEndpoint,
  WebhookEndpointList,
  WebhookEndpointWithSecret
} from "./Event.ts"
import { KycCustomer } from "./Kyc.ts"
import { Payout } from "./Payout.ts"
import { Address, atMost, PrintableText, unnamed } from "./Primitives.ts"
import { SwapIntent } from "./Swap.ts"

const EndpointIdParam = PrintableText.check(atMost(64)).annotate({
  description: "The webhook endpoint's id (`we_…`)"
}).pipe(Schema.brand("EndpointId"))

const EventIdParam = PrintableText.check(atMost(64)).annotate({
  description: "The event's id (`evt_…`), also its `webhook-id` header"
}).pipe(Schema.brand("EventId"))

/** Events to partners: webhook endpoints that receive signed events, and the events themselves. */
export class EventsGroup extends HttpApiGroup.make("events")
  .add(
    HttpApiEndpoint.post("createWebhookEndpoint", "/webhook-endpoints", {
      payload: CreateWebhookEndpointRequest,
      success: WebhookEndpointWithSecret.pipe(HttpApiSchema.status(201)),
      error: [...groupErrors, ConflictError]
    })
      .annotate(OpenApi.Summary, "Register a webhook endpoint")
      .annotate(
        OpenApi.Description,
        "Events of the chosen types are POSTed to `url`, signed with Standard Webhooks headers. The signing secret is shown in this answer and on rotation only."
      ),
    HttpApiEndpoint.get("listWebhookEndpoints", "/webhook-endpoints", {
      success: WebhookEndpointList,
      error: groupErrors
    })
      .annotate(OpenApi.Summary, "List webhook endpoints")
      .annotate(OpenApi.Description, "Every endpoint of this integration, without secrets."),
    HttpApiEndpoint.get("getWebhookEndpoint", "/webhook-endpoints/:endpointId", {
      params: { endpointId: EndpointIdParam },
      success: WebhookEndpoint,
      error: [...groupErrors, NotFoundError]
    })
      .annotate(OpenApi.Summary, "Get a webhook endpoint")
      .annotate(OpenApi.Description, "One endpoint of this integration, without its secret."),
    HttpApiEndpoint.delete("deleteWebhookEndpoint", "/webhook-endpoints/:endpointId", {
      params: { endpointId: EndpointIdParam },
      success: HttpApiSchema.NoContent,
      error: [...groupErrors, NotFoundError]
    })
      .annotate(OpenApi.Summary, "Delete a webhook endpoint (its pending deliveries are dropped)")
      .annotate(OpenApi.Description, "Stops deliveries to the endpoint at once; events already recorded stay listed."),
    HttpApiEndpoint.post("rotateWebhookSecret", "/webhook-endpoints/:endpointId/rotate-secret", {
      params: { endpointId: EndpointIdParam },
      success: WebhookEndpointWithSecret,
      error: [...groupErrors, NotFoundError]
    })
      .annotate(OpenApi.Summary, "Rotate the signing secret (the old one also signs for 24 hours)")
      .annotate(
        OpenApi.Description,
        "Returns the new secret once. For 24 hours deliveries carry signatures by both secrets, so the receiver can switch without losing events."
      ),
    HttpApiEndpoint.post("pingWebhookEndpoint", "/webhook-endpoints/:endpointId/ping", {
      params: { endpointId: EndpointIdParam },
      success: PingEvent.pipe(HttpApiSchema.status(202)),
      error: [...groupErrors, NotFoundError, ConflictError]
    })
      .annotate(OpenApi.Summary, "Send an `endpoint.ping` event to this endpoint")
      .annotate(
        OpenApi.Description,
        "Queues an `endpoint.ping` event for this endpoint only, to test the receiver. 409 when the endpoint is disabled."
      ),
    HttpApiEndpoint.get("listEvents", "/events", {
      query: ListEventsParams,
      success: EventList,
      error: groupErrors
    })
      .annotate(OpenApi.Summary, "List events for this integration, in the order they were recorded")
      .annotate(
        OpenApi.Description,
        "Every event recorded for this integration, with the exact body that was (or will be) delivered, in the order the events were recorded (committed): following the cursors shows each event once, and one resource's events in `sequence` order; `createdAt` is not strictly increasing across resources. Filter by `type` and `createdFrom`. Pass `nextCursor` as `cursor` for the next page; it is `null` on the last one. To follow the list, poll that last page again with the cursor that fetched it: new events come after the ones it held."
      ),
    HttpApiEndpoint.get("getEvent", "/events/:eventId", {
      params: { eventId: EventIdParam },
      success: EventWithAttempts,
      error: [...groupErrors, NotFoundError]
    })
      .annotate(OpenApi.Summary, "Get an event with its delivery attempts")
      .annotate(
        OpenApi.Description,
        "The event's body and every delivery attempt: endpoint, time, the receiver's status, duration and error."
      ),
    HttpApiEndpoint.post("redeliverEvent", "/events/:eventId/redeliver", {
      params: { eventId: EventIdParam },
      success: Redelivery.pipe(HttpApiSchema.status(202)),
      error: [...groupErrors, NotFoundError]
    })
      .annotate(OpenApi.Summary, "Send an event again to every enabled endpoint subscribed to its type")
      .annotate(
        OpenApi.Description,
        "Queues one more delivery of the event to each enabled endpoint subscribed to its type, and names them."
      )
  )
  .middleware(Authentication)
  .prefix("/api/integrations")
  .annotate(OpenApi.Title, "Events")
  .annotate(
    OpenApi.Description,
    "Signed events (Standard Webhooks) for payouts, KYC and swaps: at least once, in order per resource where possible; dedupe on `webhook-id`."
  )
{}

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
