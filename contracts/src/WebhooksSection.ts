/**
 * The document's OpenAPI 3.1 `webhooks`: one entry per event type, the POST this service sends to a partner's
 * endpoint. Each body schema is the envelope the server stores and sends (Event.ts), with `type` narrowed to that
 * event's literal, compiled by the same generator as the paths (OpenApi.fromApi of a small API declaring each event
 * as an endpoint's payload), so the schemas cannot drift from what is delivered.
 */
import { Array as Arr, Schema } from "effect"
import { HttpApi, HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import {
  EndpointDisabledEvent,
  EventType,
  KycEvent,
  PayoutBatchEvent,
  PayoutEvent,
  PingEvent,
  SwapEvent
} from "./Event.ts"
import { EventId } from "./Ids.ts"
import { describeFromSchema, type Json, type JsonObject } from "./OpenApiJson.ts"
import { matching } from "./Primitives.ts"
import { WEBHOOK_EXAMPLES } from "./WebhookExamples.ts"

/** The envelope whose `type` admits `type`, with `type` narrowed to that one literal. */
const envelopeOf = (type: EventType) => {
  const envelope = [PayoutEvent, KycEvent, SwapEvent, PingEvent, PayoutBatchEvent, EndpointDisabledEvent].find((
    candidate
  ) => Schema.is(candidate.fields.type)(type))!
  return Schema.Struct({
    ...envelope.fields,
    id: envelope.fields.id.annotate({ examples: [EventId.make("evt_01KAZ6QX1M8B3V5N7R9T2W4Y6C")] }),
    type: Schema.Literal(type)
  })
}

/** What each event reports; the object is the resource as the API returned it at that moment. */
const MEANING: Record<EventType, string> = {
  "payout.created": "A payout was prepared (`POST breb/payouts`); `object` is the Payout, `awaiting_deposit`.",
  "payout.deposit_confirmed":
    "The user's deposit was confirmed (`POST breb/payouts/{payoutId}/confirm`, or funds the provider reports arriving late).",
  "payout.processing": "The payout provider is sending the COP to the Bre-B key.",
  "payout.completed": "The COP arrived at the Bre-B key; the receipt carries `completedAt`.",
  "payout.failed": "The transfer to the Bre-B key failed; a `payout.refunded` follows when the funds are returned.",
  "payout.refunded": "The deposit was returned to the user.",
  "payout.expired": "No deposit arrived within the payout's deposit window (`expiresAt`).",
  "payout.delayed":
    "The payout has stayed in `deposit_confirmed` or `processing` longer than the service's threshold (30 minutes by default) without moving: sent once per payout, its status unchanged; the timeline carries a `delayed` hop.",
  "kyc.approved": "A customer's KYC was approved; `object` is the KycCustomer (`{userAddress, kycStatus, kycUrl}`).",
  "kyc.rejected": "A customer's KYC was rejected; `object` is the KycCustomer.",
  "swap.confirmed": "A swap's transaction was confirmed onchain; `object` is the SwapIntent.",
  "swap.failed": "A swap's transaction failed onchain; `object` is the SwapIntent.",
  "swap.expired": "A prepared swap expired before it was confirmed; `object` is the SwapIntent.",
  "endpoint.ping":
    "Sent to one endpoint by `POST webhook-endpoints/{endpointId}/ping`; `object` is the WebhookEndpoint.",
  "payout_batch.confirmed":
    "A batch's one transaction was confirmed (`POST breb/payout-batches/{batchId}/confirm`); `object` is the PayoutBatch, `confirmed` or `partially_confirmed` (an item whose transfer was missing or short says why in `depositError`). Each payout it confirmed has its own `payout.deposit_confirmed`.",
  "endpoint.disabled":
    "An endpoint of the integration was disabled by the service: its receiver answered `410 Gone` (at once), or every delivery to it failed for the retry window (3 days); `object` is the WebhookEndpoint, `disabled`, with `disabledReason`. Sent to the integration's other endpoints (a disabled one receives nothing); listed by `GET events`.",
  "payout_batch.finished":
    "The last payout of a batch finished (completed, failed, refunded or expired); `object` is the PayoutBatch, `completed`, `completed_with_failures` or `expired`. Sent once per batch, after that payout's own event."
}

const SIGNATURE = /^v1,[A-Za-z0-9+/]+={0,2}( v1,[A-Za-z0-9+/]+={0,2})*$/

/** The Standard Webhooks headers every delivery carries (src/partnerEvents/Signing.ts writes them). */
export const WebhookDeliveryHeaders = Schema.Struct({
  "webhook-id": EventId.annotate({
    description: "The event's `id` (`evt_…`): the same on every delivery and redelivery of it. Dedupe on it."
  }),
  "webhook-timestamp": Schema.String.check(matching(/^[0-9]+$/)).annotate({
    description:
      "When this attempt was sent, in Unix seconds. Part of what is signed; refuse ones far from your clock (`standardwebhooks` allows 5 minutes)."
  }),
  "webhook-signature": Schema.String.check(matching(SIGNATURE)).annotate({
    description:
      "Standard Webhooks: `v1,<base64 HMAC-SHA256 of \"<webhook-id>.<webhook-timestamp>.<raw body>\">`, keyed with the base64-decoded part of the endpoint's `whsec_…` secret. For 24 hours after a rotation two signatures, space-separated (new and old secret): accept the delivery when any one verifies."
  })
})

const DELIVERED =
  "Delivered: any 2xx within 10 seconds (`WEBHOOK_TIMEOUT_MS`). The body of the answer is ignored; answer first, work after."

const RETRIED =
  "Not delivered: any other status (redirects included), no answer within 10 seconds, or no connection. Retried with exponential backoff and jitter (5 s, 10 s, 20 s … capped at 6 hours) for 3 days; an endpoint whose deliveries all fail for 3 days is `disabled`, with `disabledReason`. `GET events/{eventId}` lists every attempt."

const deliveries = HttpApiGroup.make("webhooks").add(
  ...Arr.map(
    EventType.literals,
    (type) => HttpApiEndpoint.post(type, `/${type}`, { payload: envelopeOf(type), headers: WebhookDeliveryHeaders })
  )
)

/**
 * `webhooks`, and the component schemas their bodies refer to, compiled as the paths are (`finish` is the document's
 * own finishing of schemas, so both sides come out the same).
 */
export const webhooksSection = (finish: (node: Json) => Json) => {
  const compiled = finish(OpenApi.fromApi(HttpApi.make("webhooks").add(deliveries))) as JsonObject
  const paths = compiled["paths"] as Record<string, { post: JsonObject }>
  const webhooks: JsonObject = {}
  for (const type of EventType.literals) {
    // Both already `required` (OpenApi.fromApi writes it for the headers and the payload).
    const { parameters, requestBody } = paths[`/${type}`]!.post
    for (const parameter of parameters as Array<JsonObject>) describeFromSchema(parameter)
    // The body a viewer shows: this event's own example, its object at the status the event reports.
    const media = ((requestBody as JsonObject)["content"] as JsonObject)["application/json"] as JsonObject
    media["example"] = WEBHOOK_EXAMPLES[type]
    webhooks[type] = {
      post: {
        tags: ["Events"],
        operationId: `webhook.${type}`,
        summary: type,
        description: `${
          MEANING[type]
        }\n\nPOSTed to every enabled endpoint subscribed to \`${type}\` (or \`*\`), signed with the Standard Webhooks headers below; see "Events to partners (webhooks)" above for verifying them.`,
        parameters,
        requestBody,
        responses: {
          "2XX": { description: DELIVERED },
          default: { description: RETRIED }
        },
        security: []
      }
    }
  }
  const components = compiled["components"] as JsonObject
  return { webhooks, schemas: components["schemas"] as JsonObject }
}

/** For the document's description: how a receiver verifies a delivery, with the `standardwebhooks` package. */
export const WEBHOOKS_GUIDE = `

## Events to partners (webhooks)

Register an endpoint (\`POST webhook-endpoints\`) and every event of the types it subscribes to is POSTed to it: the \`webhooks\` of this document, one per type, with the body \`{ id, type, createdAt, sequence, data: { object } }\` where \`object\` is the payout, KYC customer, swap or endpoint exactly as the API returned it at that moment. \`GET events\` lists the same bodies.

\`sequence\` increases by one per resource (a payout, a KYC customer, a swap, an endpoint for its pings) with every event of that resource, starting at 1, with no gap or repeat: drop an event whose \`sequence\` is not above the last one you applied for that resource (a duplicate, or older than what you have).

Each delivery is signed with [Standard Webhooks](https://www.standardwebhooks.com/) headers: \`webhook-id\` (the event id, the same on every retry: dedupe on it), \`webhook-timestamp\` (Unix seconds) and \`webhook-signature\` (\`v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">\`; two, space-separated, for 24 hours after a rotation). A 2xx within 10 seconds is delivered; anything else is retried (5 s, 10 s, 20 s … capped at 6 hours) for 3 days, then the endpoint is disabled.

Verify the raw body, as received, before parsing it (Node, \`npm install standardwebhooks\`):

\`\`\`js
import { Webhook } from "standardwebhooks"

const webhook = new Webhook(process.env.WEBHOOK_SECRET) // the whsec_… shown when the endpoint was created

// rawBody: the request body as received (a string, not re-serialised JSON); headers: the request's headers
export const verifiedEvent = (rawBody, headers) =>
  webhook.verify(rawBody, headers) // throws on a bad signature or a timestamp over 5 minutes off
\`\`\`

In another language, by hand: the HMAC key is the **base64-decoded** part of the secret after \`whsec_\` (not its text); compute the base64 HMAC-SHA256 of \`<webhook-id>.<webhook-timestamp>.<raw body>\` and accept the delivery when it equals any of the space-separated \`v1,\` signatures (compared in constant time); refuse a \`webhook-timestamp\` more than **5 minutes** from your clock, either way. The README has the same receiver in Python.
`
