import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { CurrentIntegration, type IntegrationId, IntegrationsApi } from "@cop-integrations/contracts"
import { Effect } from "effect"
import { PartnerEvents } from "../partnerEvents/PartnerEvents.ts"
import { WebhookEndpoints } from "../partnerEvents/WebhookEndpoints.ts"

/** Stored event bodies are answered as they are (the bytes a webhook delivery sends), not re-encoded. */
const rawJson = (status: number) => (body: string) =>
  HttpServerResponse.text(body, { status, contentType: "application/json" })

export const EventsHttpLive = HttpApiBuilder.group(IntegrationsApi, "events", (handlers) =>
  Effect.gen(function*() {
    const endpoints = yield* WebhookEndpoints
    const events = yield* PartnerEvents
    const withIntegration = <A, E, R>(f: (integrationId: IntegrationId) => Effect.Effect<A, E, R>) =>
      Effect.flatMap(CurrentIntegration, ({ integrationId }) => f(integrationId))

    return handlers
      .handle("createWebhookEndpoint", ({ payload }) => withIntegration((id) => endpoints.create(id, payload)))
      .handle("listWebhookEndpoints", () => withIntegration(endpoints.list))
      .handle("getWebhookEndpoint", ({ path }) => withIntegration((id) => endpoints.get(id, path.endpointId)))
      .handle("deleteWebhookEndpoint", ({ path }) => withIntegration((id) => endpoints.remove(id, path.endpointId)))
      .handle("rotateWebhookSecret", ({ path }) => withIntegration((id) => endpoints.rotateSecret(id, path.endpointId)))
      .handle("pingWebhookEndpoint", ({ path }) =>
        withIntegration((id) => Effect.map(endpoints.ping(id, path.endpointId), rawJson(202))))
      .handle("listEvents", ({ urlParams }) =>
        withIntegration((integrationId) =>
          Effect.map(
            events.list({
              integrationId,
              type: urlParams.type,
              createdFrom: urlParams.createdFrom,
              limit: urlParams.limit,
              cursor: urlParams.cursor
            }),
            rawJson(200)
          )
        ))
      .handle("getEvent", ({ path }) =>
        withIntegration((id) => Effect.map(events.get(id, path.eventId), rawJson(200))))
      .handle("redeliverEvent", ({ path }) => withIntegration((id) => events.redeliver(id, path.eventId)))
  }))
