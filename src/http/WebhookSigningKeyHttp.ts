import { IntegrationsApi } from "@cop-integrations/contracts"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { WebhookSigningKey } from "../partnerEvents/SigningKey.ts"

export const WebhookSigningKeyHttpLive = HttpApiBuilder.group(
  IntegrationsApi,
  "webhookSigningKey",
  (handlers) =>
    Effect.gen(function*() {
      const signingKey = yield* WebhookSigningKey
      return handlers.handle("getWebhookSigningKey", () =>
        Effect.map(
          signingKey.current,
          ({ publicKey }) => ({ scheme: "v1a", algorithm: "ed25519", publicKey } as const)
        ))
    })
)
