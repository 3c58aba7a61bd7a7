import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { BadRequestError, InvalidWebhookSignatureError } from "./Errors.ts"

/** Envelope of a provider (Bridge-style) webhook event. The raw body is what the signature covers. */
export const ProviderWebhookEvent = Schema.Struct({
  event_id: Schema.String,
  event_category: Schema.String,
  event_type: Schema.String,
  event_object_id: Schema.optional(Schema.String),
  event_object_status: Schema.optional(Schema.NullOr(Schema.String)),
  event_object: Schema.Record(Schema.String, Schema.Unknown),
  event_created_at: Schema.String
}).annotate({ identifier: "ProviderWebhookEvent" })
export type ProviderWebhookEvent = typeof ProviderWebhookEvent.Type

export const WebhookAck = Schema.Struct({
  received: Schema.Literal(true),
  duplicate: Schema.Boolean
}).annotate({ identifier: "WebhookAck" })

export class WebhooksGroup extends HttpApiGroup.make("webhooks")
  .add(
    HttpApiEndpoint.post("provider", "/provider", {
      success: WebhookAck,
      error: [InvalidWebhookSignatureError, BadRequestError]
    })
      .annotate(OpenApi.Summary, "Payout provider callback")
      .annotate(
        OpenApi.Description,
        "Signed with `X-Webhook-Signature: t=<ms>,v0=<base64>` (RSA-SHA256 over `<t>.<raw body>`); events older than 10 minutes are rejected. Body: ProviderWebhookEvent. Not authenticated with a partner key."
      )
  )
  .prefix("/api/integrations/webhooks")
  .annotate(OpenApi.Title, "Webhooks")
  .annotate(OpenApi.Description, "Callbacks from the payout provider to this service (not for partners).")
{}
