import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"

export const WebhookSigningKey = Schema.Struct({
  scheme: Schema.Literal("v1a"),
  algorithm: Schema.Literal("ed25519"),
  publicKey: Schema.String.annotate({
    description:
      "`whpk_` + base64 of the raw 32-byte ed25519 public key: what a receiver of a `v1a` endpoint verifies `webhook-signature` with"
  })
}).annotate({
  identifier: "WebhookSigningKey",
  description: "The deployment's public key for `v1a` webhook signatures (Standard Webhooks, ed25519)",
  examples: [{
    scheme: "v1a",
    algorithm: "ed25519",
    publicKey: "whpk_MCowBQYDK2VwAyEAGb9ECWmEzf6FQbrBZ9w7lshQhqowtrbLDFw4rXAxZuE="
  }]
})
export type WebhookSigningKey = typeof WebhookSigningKey.Type

/** The public half of the deployment's webhook signing key: public, so no API key. */
export class WebhookSigningKeyGroup extends HttpApiGroup.make("webhookSigningKey")
  .add(
    HttpApiEndpoint.get("getWebhookSigningKey", "/webhook-signing-key", { success: WebhookSigningKey })
      .annotate(OpenApi.Summary, "The public key v1a webhook signatures verify with")
      .annotate(
        OpenApi.Description,
        "Deliveries to an endpoint whose `signatureScheme` is `v1a` carry `webhook-signature: v1a,<base64 ed25519 signature of \"<webhook-id>.<webhook-timestamp>.<raw body>\">`, signed with the deployment's private key; verify it with this public key (the `standardwebhooks` libraries take it as is). The key is the same on every replica and stays the same; no API key is needed to read it."
      )
  )
  .prefix("/api/integrations")
  .annotate(OpenApi.Title, "Webhook signing key")
  .annotate(OpenApi.Description, "The public key of `v1a` (asymmetric) webhook signatures.")
{}
