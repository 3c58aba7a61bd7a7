import { Schema } from "effect"
import { EndpointId, EventId, IntegrationId } from "./Ids.ts"
import { KycCustomer } from "./Kyc.ts"
import { ListCursor, ListLimit, Payout } from "./Payout.ts"
import { PayoutBatch } from "./PayoutBatch.ts"
import { KNOWN_FAILURE_CODES, type KnownFailureCode } from "./PayoutFailure.ts"
import { atLeast, atMost, IsoTimestamp, matching, PrintableText, unnamed } from "./Primitives.ts"
import { SwapIntent } from "./Swap.ts"

export const PayoutEventType = Schema.Literals([
  "payout.created",
  "payout.deposit_confirmed",
  "payout.processing",
  "payout.completed",
  "payout.failed",
  "payout.refunded",
  "payout.expired",
  "payout.delayed"
])
export const PayoutBatchEventType = Schema.Literals(["payout_batch.confirmed", "payout_batch.finished"])
export const KycEventType = Schema.Literals(["kyc.approved", "kyc.rejected"])
export const SwapEventType = Schema.Literals(["swap.confirmed", "swap.failed", "swap.expired"])
export const PingEventType = Schema.Literal("endpoint.ping")
export const EndpointDisabledEventType = Schema.Literal("endpoint.disabled")

export const EventType = Schema.Literals([
  ...PayoutEventType.literals,
  ...KycEventType.literals,
  ...SwapEventType.literals,
  PingEventType.literal,
  ...PayoutBatchEventType.literals,
  EndpointDisabledEventType.literal
]).annotate({ identifier: "EventType", description: "What happened; `<resource>.<what happened to it>`" })
export type EventType = typeof EventType.Type

/**
 * The status `data.object` has in an event of each type (a payout's and a swap's `status`, a customer's `kycStatus`,
 * an endpoint's `status`): an event is recorded with the status change it reports, so its object is at that status.
 */
export const EVENT_OBJECT_STATUSES: { readonly [Type in EventType]: ReadonlyArray<string> } = {
  "payout.created": ["awaiting_deposit"],
  "payout.deposit_confirmed": ["deposit_confirmed"],
  "payout.processing": ["processing"],
  "payout.completed": ["completed"],
  "payout.failed": ["failed"],
  "payout.refunded": ["refunded"],
  "payout.expired": ["expired"],
  // sent while a payout stays put, its status unchanged
  "payout.delayed": ["deposit_confirmed", "processing"],
  "kyc.approved": ["approved"],
  "kyc.rejected": ["rejected"],
  "swap.confirmed": ["confirmed"],
  "swap.failed": ["failed"],
  "swap.expired": ["expired"],
  "endpoint.ping": ["enabled"],
  // the batch's status once its confirm is recorded: every item it paid is funded, some may still await theirs
  "payout_batch.confirmed": ["partially_confirmed", "confirmed"],
  "payout_batch.finished": ["completed", "completed_with_failures", "expired"],
  "endpoint.disabled": ["disabled"]
}

/** The event types an endpoint can subscribe to, or `*` for every type (including ones added later). */
export const EventSubscription = Schema.Literals(["*", ...EventType.literals]).annotate({
  identifier: "EventSubscription",
  description: "An event type, or `*` for all of them"
})
export type EventSubscription = typeof EventSubscription.Type

export const WebhookEndpointStatus = Schema.Literals(["enabled", "disabled"]).annotate({
  identifier: "WebhookEndpointStatus",
  description:
    "`disabled` after its deliveries failed for the whole retry window (3 days), or when the integration disabled it (PATCH); `disabledReason` says why. A disabled endpoint receives nothing."
})

export const WebhookSignatureScheme = Schema.Literals(["v1", "v1a"]).annotate({
  identifier: "WebhookSignatureScheme",
  description:
    "How deliveries are signed (Standard Webhooks): `v1`, HMAC-SHA256 with the endpoint's `whsec_` secret (the default); `v1a`, ed25519 with the deployment's signing key, verified with its public key (`GET webhook-signing-key`), so the receiver holds no secret"
})
export type WebhookSignatureScheme = typeof WebhookSignatureScheme.Type

export const WebhookEndpoint = Schema.Struct({
  endpointId: EndpointId,
  url: Schema.String,
  events: Schema.Array(EventSubscription),
  status: WebhookEndpointStatus,
  signatureScheme: WebhookSignatureScheme,
  disabledReason: Schema.NullOr(Schema.String),
  createdAt: IsoTimestamp,
  updatedAt: IsoTimestamp
}).annotate({ identifier: "WebhookEndpoint", description: "Where this integration's events are sent" })
export type WebhookEndpoint = typeof WebhookEndpoint.Type

export const WebhookSecret = Schema.String.check(matching(/^whsec_[A-Za-z0-9+/]+={0,2}$/)).annotate({
  identifier: "WebhookSecret",
  description: "Standard Webhooks signing secret (`whsec_` + base64 key bytes); shown only at creation and rotation"
})

export const WebhookEndpointWithSecret = Schema.Struct({ ...WebhookEndpoint.fields, secret: WebhookSecret })
  .annotate({ identifier: "WebhookEndpointWithSecret" })
export type WebhookEndpointWithSecret = typeof WebhookEndpointWithSecret.Type

const EndpointUrl = PrintableText.check(
  atLeast(1, "must not be empty"),
  atMost(2048, "must be at most 2048 characters")
).annotate({
  description:
    "Absolute URL receiving POSTed events. Live: `https` only, to a public address. Mock: `http` and loopback too."
})

const EndpointEvents = Schema.Array(EventSubscription).check(
  Schema.isMinLength(1, { message: "must list at least one event type (or omit it for all)" }).abort(),
  Schema.isMaxLength(32, { message: "must list at most 32 event types" }).abort()
)

export const CreateWebhookEndpointRequest = Schema.Struct({
  url: EndpointUrl,
  events: Schema.optionalKey(
    EndpointEvents.annotate({ description: "Event types to receive (default `[\"*\"]`: all)" })
  ),
  signatureScheme: Schema.optionalKey(unnamed(WebhookSignatureScheme, {
    description:
      "`v1` (default): HMAC with the endpoint's secret; `v1a`: ed25519, verified with `GET webhook-signing-key`"
  }))
}).annotate({ identifier: "CreateWebhookEndpointRequest" })
export type CreateWebhookEndpointRequest = typeof CreateWebhookEndpointRequest.Type

export const UpdateWebhookEndpointRequest = Schema.Struct({
  status: Schema.optionalKey(unnamed(WebhookEndpointStatus, {
    description:
      "`disabled`: no new deliveries, and the ones still pending (retries included) are canceled; `enabled` on a disabled endpoint: deliveries resume for events recorded from then on, `disabledReason` and its failure record are cleared (events recorded while it was disabled are not sent: redeliver them)"
  })),
  url: Schema.optionalKey(EndpointUrl.annotate({
    description:
      "A new absolute URL, checked as at creation (live: `https` only, to a public address); pending deliveries go to it"
  })),
  events: Schema.optionalKey(
    EndpointEvents.annotate({
      description: "The event types to receive from now on, replacing the list (`[\"*\"]`: all)"
    })
  ),
  signatureScheme: Schema.optionalKey(unnamed(WebhookSignatureScheme, {
    description: "How deliveries are signed from now on (pending ones included): `v1` or `v1a`"
  }))
}).annotate({ identifier: "UpdateWebhookEndpointRequest" })
export type UpdateWebhookEndpointRequest = typeof UpdateWebhookEndpointRequest.Type

export const WebhookEndpointList = Schema.Struct({
  items: Schema.Array(WebhookEndpoint)
}).annotate({ identifier: "WebhookEndpointList" })

/** A positive safe integer, documented as the document's plain `integer`. */
const EventSequence = Schema.Number.check(
  Schema.isInt({ toJsonSchema: () => ({ type: "integer" }) }),
  Schema.isGreaterThanOrEqualTo(1)
).annotate({
  identifier: "EventSequence",
  description: "Increases by one per resource with every event of that resource (1, 2, 3, … for a payout, swap, KYC " +
    "customer or endpoint). Drop an event whose sequence is not above the last one you applied for that resource: " +
    "it is older than what you have."
})

const envelope = <T extends Schema.Top, O extends Schema.Top>(type: T, object: O) =>
  Schema.Struct({
    id: EventId.annotate({ description: "`evt_…`; equals the `webhook-id` header of every delivery of it" }),
    type,
    createdAt: IsoTimestamp,
    sequence: EventSequence,
    data: Schema.Struct({ object })
  })

export const PayoutEvent = envelope(PayoutEventType, Payout).annotate({ identifier: "PayoutEvent" })
export const KycEvent = envelope(KycEventType, KycCustomer).annotate({ identifier: "KycEvent" })
export const SwapEvent = envelope(SwapEventType, SwapIntent).annotate({ identifier: "SwapEvent" })
export const PingEvent = envelope(PingEventType, WebhookEndpoint).annotate({ identifier: "PingEvent" })
export const PayoutBatchEvent = envelope(PayoutBatchEventType, PayoutBatch).annotate({ identifier: "PayoutBatchEvent" })
export const EndpointDisabledEvent = envelope(EndpointDisabledEventType, WebhookEndpoint).annotate({
  identifier: "EndpointDisabledEvent"
})

/** The body of every webhook delivery: `object` is the resource as the API returned it at that moment. */
export const Event = Schema.Union([
  PayoutEvent,
  KycEvent,
  SwapEvent,
  PingEvent,
  PayoutBatchEvent,
  EndpointDisabledEvent
]).annotate({
  identifier: "Event",
  description:
    "`{ id, type, createdAt, sequence, data: { object } }`, signed with Standard Webhooks headers when delivered"
})
export type Event = typeof Event.Type

/** A safe integer, documented as the named `Int` component the document has always had (plain `integer`). */
const Int = Schema.Number.check(Schema.isInt({ identifier: "Int", toJsonSchema: () => ({ type: "integer" }) }))

export const DeliveryAttempt = Schema.Struct({
  endpointId: EndpointId,
  attemptedAt: IsoTimestamp,
  outcome: Schema.Literals(["succeeded", "failed"]),
  responseStatus: Schema.NullOr(Int).annotate({
    description: "The receiver's HTTP status; null when none came"
  }),
  error: Schema.NullOr(Schema.String).annotate({
    description: "Why the attempt failed (timeout, refused target, status)"
  }),
  durationMs: Int,
  responseExcerpt: Schema.NullOr(Schema.String).annotate({
    description:
      "The start of the receiver's response body as text: at most 256 characters of its first 1 KiB, read as UTF-8, with control characters removed (tabs and line breaks become spaces). Null when no body came (no answer, an empty body) and for attempts recorded before this field existed.",
    examples: ["{\"received\":true}"]
  })
}).annotate({ identifier: "DeliveryAttempt" })
export type DeliveryAttempt = typeof DeliveryAttempt.Type

const withAttempts = Schema.fieldsAssign({ attempts: Schema.Array(DeliveryAttempt) })

/** An event with every delivery attempt of it, oldest first. */
export const EventWithAttempts = Schema.Union([
  PayoutEvent.pipe(withAttempts),
  KycEvent.pipe(withAttempts),
  SwapEvent.pipe(withAttempts),
  PingEvent.pipe(withAttempts),
  PayoutBatchEvent.pipe(withAttempts),
  EndpointDisabledEvent.pipe(withAttempts)
]).annotate({ identifier: "EventWithAttempts", description: "An event and every delivery attempt of it, oldest first" })
export type EventWithAttempts = typeof EventWithAttempts.Type

export const EventList = Schema.Struct({
  integrationId: IntegrationId,
  items: Schema.Array(Event),
  nextCursor: Schema.NullOr(Schema.String)
}).annotate({ identifier: "EventList" })
export type EventList = typeof EventList.Type

/** A resource an event is about: a payout's, swap's or endpoint's id, or a customer's wallet address. */
const EventResourceId = PrintableText.check(
  atLeast(1, "must not be empty"),
  atMost(64, "must be at most 64 characters")
).annotate({
  description:
    "Only the events about this resource, the id of the event's `data.object`: a payout's `payoutId` (`po_…`), a batch's `batchId` (`pb_…`), a swap's `intentId` (`sw_…`), a KYC customer's `userAddress` (any letter case) or a webhook endpoint's `endpointId` (`we_…`). Listed in the order they were recorded, which is the resource's `sequence` order.",
  examples: ["po_3kTMd9Qv7xWc2LpZ8hR1sA"]
})

export const ListEventsParams = Schema.Struct({
  type: Schema.optionalKey(EventType),
  resourceId: Schema.optionalKey(EventResourceId),
  createdFrom: Schema.optionalKey(IsoTimestamp),
  limit: Schema.optionalKey(ListLimit),
  cursor: Schema.optionalKey(ListCursor)
})

export const Redelivery = Schema.Struct({
  eventId: EventId,
  endpointIds: Schema.Array(EndpointId).annotate({ description: "The enabled endpoints it will be sent to again" })
}).annotate({ identifier: "Redelivery" })
export type Redelivery = typeof Redelivery.Type

/** The most events one replay sends again: a longer outage is replayed in several ranges. */
export const MAX_REPLAY_EVENTS = 10_000

export const ReplayRequest = Schema.Struct({
  from: IsoTimestamp.annotate({ description: "Events recorded at or after this" }),
  to: IsoTimestamp.annotate({ description: "Events recorded before this; later than `from`" }),
  types: Schema.optionalKey(
    EndpointEvents.annotate({
      description: "Only events of these types (default: every type the endpoint subscribes to)"
    })
  )
}).annotate({ identifier: "ReplayRequest" })
export type ReplayRequest = typeof ReplayRequest.Type

export const WebhookReplayStatus = Schema.Literals(["running", "completed"]).annotate({
  description: "`running` while some of its deliveries are pending (retries included); `completed` once none is"
})

export const WebhookReplay = Schema.Struct({
  replayId: Schema.String.annotate({ description: "`rp_…`" }),
  endpointId: EndpointId,
  from: IsoTimestamp,
  to: IsoTimestamp,
  types: Schema.NullOr(Schema.Array(EventSubscription)),
  status: WebhookReplayStatus,
  events: Schema.Number.annotate({ description: "The events of the range it sends again, each once" }),
  delivered: Schema.Number.annotate({ description: "Of those, delivered (a 2xx) so far" }),
  failed: Schema.Number.annotate({
    description: "Of those, given up: every attempt failed for the retry window, or the endpoint was disabled"
  }),
  pending: Schema.Number.annotate({ description: "Of those, still to be delivered" }),
  createdAt: IsoTimestamp
}).annotate({
  identifier: "WebhookReplay",
  description:
    "A range of events sent again to one endpoint, in the order they were recorded, through the usual deliveries (signed, retried, in order per resource), with its progress"
})
export type WebhookReplay = typeof WebhookReplay.Type

export const AdvancePayoutRequest = Schema.Struct({
  to: Schema.Literals(["processing", "completed", "failed", "refunded"]).annotate({
    description: "The status to move to; only forward moves (else 409)"
  }),
  failureCode: Schema.optionalKey(
    Schema.Literals(KNOWN_FAILURE_CODES as unknown as readonly [KnownFailureCode, ...Array<KnownFailureCode>]).annotate(
      {
        description:
          "With `to: failed` or `refunded` only: the documented failure code the payout records in `failure` (default `provider_error` for `failed`, `returned_by_bank` for `refunded`)"
      }
    )
  )
}).annotate({ identifier: "AdvancePayoutRequest" })
export type AdvancePayoutRequest = typeof AdvancePayoutRequest.Type

export const TriggerEventRequest = Schema.Struct({
  type: EventType.annotate({ description: "The event type to produce (any type of the webhooks section)" })
}).annotate({ identifier: "TriggerEventRequest" })
export type TriggerEventRequest = typeof TriggerEventRequest.Type

export const TriggeredEvent = Schema.Struct({
  type: EventType,
  eventId: EventId.annotate({ description: "The event produced; `GET events/{eventId}` reads it" }),
  resourceId: Schema.String.annotate({
    description:
      "What it is about: a payout's `po_…`, a batch's `pb_…`, a swap's `sw_…`, a customer's address (lower case) or an endpoint's `we_…`"
  })
}).annotate({ identifier: "TriggeredEvent" })
export type TriggeredEvent = typeof TriggeredEvent.Type
