import { HttpApiBuilder } from "effect/http-api"
import { IntegrationsApi } from "@cop-integrations/contracts"
import { Effect } from "effect"
import { ProviderWebhook } from "../providerWebhooks/ProviderWebhook.ts"

export const WebhooksHttpLive = HttpApiBuilder.group(IntegrationsApi, "webhooks", (handlers) =>
  Effect.gen(function*() {
    const webhook = yield* ProviderWebhook
    return handlers.handle("provider", ({ request }) =>
      Effect.flatMap(
        Effect.orDie(request.text),
        (rawBody) => webhook.receive({ headers: request.headers, rawBody })
      ))
  }))
