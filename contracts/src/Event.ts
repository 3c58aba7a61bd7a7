import { Schema } from "effect"
import { EndpointId, EventId, IntegrationId } from "./Ids.ts"
import { KycCustomer } from "./Kyc.ts"
import { ListCursor, ListLimit, Payout } from "./Payout.ts"
import { IsoTimestamp, PrintableText, RejectUnknownFields } from "./Primitives.ts"
import { SwapIntent } from "./Swap.ts"

export const PayoutEventType = Schema.Literal(
  "payout.created",
  "payout.deposit_confirmed",
  "payout.processing",
  "payout.completed",
  "payout.failed",
  "payout.refunded",
  "payout.expired"
)
export const KycEventType = Schema.Literal("kyc.approved", "kyc.rejected")
export const SwapEventType = Schema.Literal("swap.confirmed", "swap.failed", "swap.expired")
export const PingEventType = Schema.Literal("endpoint.ping")

export const EventType = Schema.Literal(
  ...PayoutEventType.literals,
  ...KycEventType.literals,
  ...SwapEventType.literals,
  ...PingEventType.literals
).annotations({ identifier: "EventType", description: "What happened; `<resource>.<what happened to it>`" })
export type EventType = typeof EventType.Type

/** The event types an endpoint can subscribe to, or `*` for every type (including ones added later). */
export const EventSubscription = Schema.Literal("*", ...EventType.literals).annotations({
  identifier: "EventSubscription",
  description: "An event type, or `*` for all of them"
})
export type EventSubscription = typeof EventSubscription.Type

export const WebhookEndpointStatus = Schema.Literal("enabled", "disabled").annotations({
  identifier: "WebhookEndpointStatus",
  description: "`disabled` after its deliveries failed for the whole retry window (3 days); `disabledReason` says why"
})

export const WebhookEndpoint = Schema.Struct({
  endpointId: EndpointId,
  url: Schema.String,
  events: Schema.Array(EventSubscription),
  status: WebhookEndpointStatus,
  disabledReason: Schema.NullOr(Schema.String),
  createdAt: IsoTimestamp,
  updatedAt: IsoTimestamp
}).annotations({ identifier: "WebhookEndpoint", description: "Where this integration's events are sent" })
export type WebhookEndpoint = typeof WebhookEndpoint.Type

export const WebhookSecret = Schema.String.pipe(Schema.pattern(/^whsec_[A-Za-z0-9+/]+={0,2}$/)).annotations({
  identifier: "WebhookSecret",
  description: "Standard Webhooks signing secret (`whsec_` + base64 key bytes); shown only at creation and rotation"
})

export const WebhookEndpointWithSecret = Schema.extend(WebhookEndpoint, Schema.Struct({ secret: WebhookSecret }))
  .annotations({ identifier: "WebhookEndpointWithSecret" })
export type WebhookEndpointWithSecret = typeof WebhookEndpointWithSecret.Type

export const CreateWebhookEndpointRequest = Schema.Struct({
  url: PrintableText.pipe(
    Schema.minLength(1, { message: () => "must not be empty" }),
    Schema.maxLength(2048, { message: () => "must be at most 2048 characters" })
  ).annotations({
    description:
      "Absolute URL receiving POSTed events. Live: `https` only, to a public address. Mock: `http` and loopback too."
  }),
  events: Schema.optionalWith(
    Schema.Array(EventSubscription).pipe(
      Schema.minItems(1, { message: () => "must list at least one event type (or omit it for all)" }),
      Schema.maxItems(32, { message: () => "must list at most 32 event types" })
    ),
    { exact: true }
  ).annotations({ description: "Event types to receive (default `[\"*\"]`: all)" })
}).annotations({ identifier: "CreateWebhookEndpointRequest", ...RejectUnknownFields })
export type CreateWebhookEndpointRequest = typeof CreateWebhookEndpointRequest.Type

export const WebhookEndpointList = Schema.Struct({
  items: Schema.Array(WebhookEndpoint)
}).annotations({ identifier: "WebhookEndpointList" })

const envelope = <T extends Schema.Schema.Any, O extends Schema.Schema.Any>(type: T, object: O) =>
  Schema.Struct({
    id: EventId.annotations({ description: "`evt_…`; equals the `webhook-id` header of every delivery of it" }),
    type,
    createdAt: IsoTimestamp,
    data: Schema.Struct({ object })
  })

export const PayoutEvent = envelope(PayoutEventType, Payout).annotations({ identifier: "PayoutEvent" })
export const KycEvent = envelope(KycEventType, KycCustomer).annotations({ identifier: "KycEvent" })
export const SwapEvent = envelope(SwapEventType, SwapIntent).annotations({ identifier: "SwapEvent" })
export const PingEvent = envelope(PingEventType, WebhookEndpoint).annotations({ identifier: "PingEvent" })

/** The body of every webhook delivery: `object` is the resource as the API returned it at that moment. */
export const Event = Schema.Union(PayoutEvent, KycEvent, SwapEvent, PingEvent).annotations({
  identifier: "Event",
  description: "`{ id, type, createdAt, data: { object } }`, signed with Standard Webhooks headers when delivered"
})
export type Event = typeof Event.Type

export const DeliveryAttempt = Schema.Struct({
  endpointId: EndpointId,
  attemptedAt: IsoTimestamp,
  outcome: Schema.Literal("succeeded", "failed"),
  responseStatus: Schema.NullOr(Schema.Int).annotations({
    description: "The receiver's HTTP status; null when none came"
  }),
  error: Schema.NullOr(Schema.String).annotations({
    description: "Why the attempt failed (timeout, refused target, status)"
  }),
  durationMs: Schema.Int
}).annotations({ identifier: "DeliveryAttempt" })
export type DeliveryAttempt = typeof DeliveryAttempt.Type

const Attempts = Schema.Struct({ attempts: Schema.Array(DeliveryAttempt) })

export const EventWithAttempts = Schema.Union(
  Schema.extend(PayoutEvent, Attempts),
  Schema.extend(KycEvent, Attempts),
  Schema.extend(SwapEvent, Attempts),
  Schema.extend(PingEvent, Attempts)
).annotations({
  identifier: "EventWithAttempts",
  description: "An event with every delivery attempt of it, oldest first"
})
export type EventWithAttempts = typeof EventWithAttempts.Type

export const EventList = Schema.Struct({
  integrationId: IntegrationId,
  items: Schema.Array(Event),
  nextCursor: Schema.NullOr(Schema.String)
}).annotations({ identifier: "EventList" })
export type EventList = typeof EventList.Type

export const ListEventsParams = Schema.Struct({
  type: Schema.optionalWith(EventType, { exact: true }),
  createdFrom: Schema.optionalWith(IsoTimestamp, { exact: true }),
  limit: Schema.optionalWith(ListLimit, { exact: true }),
  cursor: Schema.optionalWith(ListCursor, { exact: true })
})

export const Redelivery = Schema.Struct({
  eventId: EventId,
  endpointIds: Schema.Array(EndpointId).annotations({ description: "The enabled endpoints it will be sent to again" })
}).annotations({ identifier: "Redelivery" })
export type Redelivery = typeof Redelivery.Type

export const AdvancePayoutRequest = Schema.Struct({
  to: Schema.Literal("processing", "completed", "failed", "refunded").annotations({
    description: "The status to move to; only forward moves (else 409)"
  })
}).annotations({ identifier: "AdvancePayoutRequest", ...RejectUnknownFields })
export type AdvancePayoutRequest = typeof AdvancePayoutRequest.Type
