import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Authentication } from "./Auth.ts"
import { groupErrors } from "./Breb.ts"
import { ConflictError, NotFoundError } from "./Errors.ts"
import {
  CreateWebhookEndpointRequest,
  EventList,
  EventWithAttempts,
  ListEventsParams,
  PingEvent,
  Redelivery,
  ReplayRequest,
  UpdateWebhookEndpointRequest,
  WebhookEndpoint,
  WebhookEndpointList,
  WebhookEndpointWithSecret,
  WebhookReplay
} from "./Event.ts"
import { atMost, PrintableText } from "./Primitives.ts"

const EndpointIdParam = PrintableText.check(atMost(64)).annotate({
  description: "The webhook endpoint's id (`we_…`)"
}).pipe(Schema.brand("EndpointId"))

const ReplayIdParam = PrintableText.check(atMost(64)).annotate({ description: "The replay's id (`rp_…`)" })

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
    HttpApiEndpoint.patch("updateWebhookEndpoint", "/webhook-endpoints/:endpointId", {
      params: { endpointId: EndpointIdParam },
      payload: UpdateWebhookEndpointRequest,
      success: WebhookEndpoint,
      error: [...groupErrors, NotFoundError]
    })
      .annotate(OpenApi.Summary, "Update a webhook endpoint: enable or disable it, change its URL or event types")
      .annotate(
        OpenApi.Description,
        "Sets the fields given (`status`, `url`, `events`; the others stay as they are) and answers the endpoint, without its secret. `status: disabled` stops deliveries at once: no event is queued for it any more, and its pending deliveries (retries included) are canceled (an attempt already under way finishes); `disabledReason` says it was disabled by the integration. `status: enabled` on a disabled endpoint (by the integration or after failing for the retry window) clears `disabledReason` and its failure record: events recorded from then on are delivered; those recorded while it was disabled are not (list them with `GET events` and redeliver them). Setting the status it already has changes nothing. A new `url` is checked as at creation; `events` replaces the subscription for events recorded from then on. Another integration's endpoint is 404."
      ),
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
    HttpApiEndpoint.post("replayWebhookEvents", "/webhook-endpoints/:endpointId/replay", {
      params: { endpointId: EndpointIdParam },
      payload: ReplayRequest,
      success: WebhookReplay.pipe(HttpApiSchema.status(202)),
      error: [...groupErrors, NotFoundError, ConflictError]
    })
      .annotate(OpenApi.Summary, "Send a time range of events again to this endpoint")
      .annotate(
        OpenApi.Description,
        "For a receiver recovering from an outage: every event of the integration recorded from `from` (inclusive) to `to` (exclusive), of the types the endpoint subscribes to (or of `types`), is sent again to this endpoint, each once, in the order it was recorded, as the usual deliveries (signed, retried, in order per resource; the same `webhook-id`, so a receiver dedupes what it had). At most 10,000 events a replay (400 naming `to` past that: replay the range in parts). Answers 202 with the replay and its progress; `GET .../replays/{replayId}` follows it. 409 when the endpoint is disabled."
      ),
    HttpApiEndpoint.get("getWebhookReplay", "/webhook-endpoints/:endpointId/replays/:replayId", {
      params: { endpointId: EndpointIdParam, replayId: ReplayIdParam },
      success: WebhookReplay,
      error: [...groupErrors, NotFoundError]
    })
      .annotate(OpenApi.Summary, "A replay's progress")
      .annotate(
        OpenApi.Description,
        "How many of the replay's events are delivered, given up or still pending; `completed` once none is pending."
      ),
    HttpApiEndpoint.get("listEvents", "/events", {
      query: ListEventsParams,
      success: EventList,
      error: groupErrors
    })
      .annotate(OpenApi.Summary, "List events for this integration, in the order they were recorded")
      .annotate(
        OpenApi.Description,
        "Every event recorded for this integration, with the exact body that was (or will be) delivered, in the order the events were recorded (committed): following the cursors shows each event once, and one resource's events in `sequence` order; `createdAt` is not strictly increasing across resources. Filter by `type`, `resourceId` (the events of one payout, swap, customer or endpoint, in `sequence` order) and `createdFrom`; filters combine (all must hold). Pass `nextCursor` as `cursor` for the next page; it is `null` on the last one. To follow the list, poll that last page again with the cursor that fetched it: new events come after the ones it held. A cursor returned for a list filtered by `resourceId` continues that list only: pass it with the same filters (`type` and `createdFrom` included), else 400 naming `cursor`."
      ),
    HttpApiEndpoint.get("getEvent", "/events/:eventId", {
      params: { eventId: EventIdParam },
      success: EventWithAttempts,
      error: [...groupErrors, NotFoundError]
    })
      .annotate(OpenApi.Summary, "Get an event with its delivery attempts")
      .annotate(
        OpenApi.Description,
        "The event's body and every delivery attempt, oldest first: endpoint, time, outcome, the receiver's status, duration, error and the start of the receiver's response body (`responseExcerpt`)."
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
