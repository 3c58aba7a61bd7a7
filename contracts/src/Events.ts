import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "./Auth.ts"
import { BadRequestError, ConflictError, NotFoundError, TooManyRequestsError } from "./Errors.ts"
import {
  AdvancePayoutRequest,
  CreateWebhookEndpointRequest,
  EventList,
  EventWithAttempts,
  ListEventsParams,
  PingEvent,
  Redelivery,
  WebhookEndpoint,
  WebhookEndpointList,
  WebhookEndpointWithSecret
} from "./Event.ts"
import { KycCustomer } from "./Kyc.ts"
import { Payout } from "./Payout.ts"
import { Address, PrintableText } from "./Primitives.ts"

const endpointId = HttpApiSchema.param("endpointId", PrintableText.pipe(Schema.maxLength(64)))
const eventId = HttpApiSchema.param("eventId", PrintableText.pipe(Schema.maxLength(64)))

/** Events to partners: webhook endpoints that receive signed events, and the events themselves. */
export class EventsGroup extends HttpApiGroup.make("events")
  .add(
    HttpApiEndpoint.post("createWebhookEndpoint", "/webhook-endpoints")
      .setPayload(CreateWebhookEndpointRequest)
      .addSuccess(WebhookEndpointWithSecret, { status: 201 })
      .addError(ConflictError)
      .annotate(OpenApi.Summary, "Register a webhook endpoint")
  )
  .add(
    HttpApiEndpoint.get("listWebhookEndpoints", "/webhook-endpoints")
      .addSuccess(WebhookEndpointList)
      .annotate(OpenApi.Summary, "List webhook endpoints")
  )
  .add(
    HttpApiEndpoint.get("getWebhookEndpoint")`/webhook-endpoints/${endpointId}`
      .addSuccess(WebhookEndpoint)
      .addError(NotFoundError)
      .annotate(OpenApi.Summary, "Get a webhook endpoint")
  )
  .add(
    HttpApiEndpoint.del("deleteWebhookEndpoint")`/webhook-endpoints/${endpointId}`
      .addSuccess(HttpApiSchema.NoContent)
      .addError(NotFoundError)
      .annotate(OpenApi.Summary, "Delete a webhook endpoint (its pending deliveries are dropped)")
  )
  .add(
    HttpApiEndpoint.post("rotateWebhookSecret")`/webhook-endpoints/${endpointId}/rotate-secret`
      .addSuccess(WebhookEndpointWithSecret)
      .addError(NotFoundError)
      .annotate(OpenApi.Summary, "Rotate the signing secret (the old one also signs for 24 hours)")
  )
  .add(
    HttpApiEndpoint.post("pingWebhookEndpoint")`/webhook-endpoints/${endpointId}/ping`
      .addSuccess(PingEvent, { status: 202 })
      .addError(NotFoundError)
      .addError(ConflictError)
      .annotate(OpenApi.Summary, "Send an `endpoint.ping` event to this endpoint")
  )
  .add(
    HttpApiEndpoint.get("listEvents", "/events")
      .setUrlParams(ListEventsParams)
      .addSuccess(EventList)
      .annotate(OpenApi.Summary, "List events for this integration, oldest first")
  )
  .add(
    HttpApiEndpoint.get("getEvent")`/events/${eventId}`
      .addSuccess(EventWithAttempts)
      .addError(NotFoundError)
      .annotate(OpenApi.Summary, "Get an event with its delivery attempts")
  )
  .add(
    HttpApiEndpoint.post("redeliverEvent")`/events/${eventId}/redeliver`
      .addSuccess(Redelivery, { status: 202 })
      .addError(NotFoundError)
      .annotate(OpenApi.Summary, "Send an event again to every enabled endpoint subscribed to its type")
  )
  .middleware(Authentication)
  .addError(BadRequestError)
  .addError(TooManyRequestsError)
  .prefix("/api/integrations")
  .annotate(OpenApi.Title, "Events")
  .annotate(
    OpenApi.Description,
    "Signed events (Standard Webhooks) for payouts, KYC and swaps: at least once, in order per resource where possible; dedupe on `webhook-id`."
  )
{}

const payoutId = HttpApiSchema.param("payoutId", PrintableText.pipe(Schema.maxLength(64)))
const userAddress = HttpApiSchema.param("userAddress", Address)

/** Sandbox only: produce every outcome on demand. A live deployment answers 404. */
export class TestHelpersGroup extends HttpApiGroup.make("testHelpers")
  .add(
    HttpApiEndpoint.post("advancePayout")`/payouts/${payoutId}/advance`
      .setPayload(AdvancePayoutRequest)
      .addSuccess(Payout)
      .addError(NotFoundError)
      .addError(ConflictError)
      .annotate(OpenApi.Summary, "Move a payout forward (mock mode only)")
  )
  .add(
    HttpApiEndpoint.post("rejectKyc")`/kyc/${userAddress}/reject`
      .addSuccess(KycCustomer)
      .addError(NotFoundError)
      .addError(ConflictError)
      .annotate(OpenApi.Summary, "Reject a customer's KYC (mock mode only)")
  )
  .middleware(Authentication)
  .addError(BadRequestError)
  .addError(TooManyRequestsError)
  .prefix("/api/integrations/test-helpers")
  .annotate(OpenApi.Title, "Test helpers")
  .annotate(
    OpenApi.Description,
    "Mock mode only (404 in live mode): drive payouts and KYC through the same state machine and events as the provider's webhooks."
  )
{}
