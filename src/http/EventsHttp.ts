import { HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { CurrentIntegration, type IntegrationId, IntegrationsApi } from "@cop-integrations/contracts"
import { Effect } from "effect"
import { PartnerEvents } from "../partnerEvents/PartnerEvents.ts"
import { WebhookEndpoints } from "../partnerEvents/WebhookEndpoints.ts"
import { WebhookReplays } from "../partnerEvents/WebhookReplays.ts"
import { answerConflicts } from "./Conflicts.ts"

/** Stored event bodies are answered as they are (the bytes a webhook delivery sends), not re-encoded. */
const rawJson = (status: number) => (body: string) =>
  HttpServerResponse.text(body, { status, contentType: "application/json" })

export const EventsHttpLive = HttpApiBuilder.group(IntegrationsApi, "events", (handlers) =>
  Effect.gen(function*() {
    const endpoints = yield* WebhookEndpoints
    const events = yield* PartnerEvents
    const replays = yield* WebhookReplays
    const withIntegration = <A, E, R>(f: (integrationId: IntegrationId) => Effect.Effect<A, E, R>) =>
      Effect.flatMap(CurrentIntegration, ({ integrationId }) => f(integrationId))
    /** `withIntegration`, the endpoint service's conflicts answered as 409. */
    const refusable = <A, E, R>(f: (integrationId: IntegrationId) => Effect.Effect<A, E, R>) =>
      answerConflicts(withIntegration(f))

    return handlers
      .handle("createWebhookEndpoint", ({ payload }) => refusable((id) => endpoints.create(id, payload)))
      .handle("listWebhookEndpoints", () => withIntegration(endpoints.list))
      .handle("getWebhookEndpoint", ({ params }) => withIntegration((id) => endpoints.get(id, params.endpointId)))
      .handle("updateWebhookEndpoint", ({ params, payload }) =>
        withIntegration((id) => endpoints.update(id, params.endpointId, payload)))
      .handle("deleteWebhookEndpoint", ({ params }) =>
        withIntegration((id) => endpoints.remove(id, params.endpointId)))
      .handle("rotateWebhookSecret", ({ params }) =>
        withIntegration((id) =>
          endpoints.rotateSecret(id, params.endpointId)
        ))
      .handle("pingWebhookEndpoint", ({ params }) =>
        refusable((id) =>
          Effect.map(endpoints.ping(id, params.endpointId), rawJson(202))
        ))
      .handle("replayWebhookEvents", ({ params, payload }) =>
        refusable((id) =>
          replays.start(id, params.endpointId, payload)
        ))
      .handle("getWebhookReplay", ({ params }) =>
        withIntegration((id) =>
          replays.get(id, params.endpointId, params.replayId)
        ))
      .handle("listEvents", ({ query }) =>
        withIntegration((integrationId) =>
          Effect.map(
            events.list({
              integrationId,
              type: query.type,
              resourceId: query.resourceId,
              createdFrom: query.createdFrom,
              limit: query.limit,
              cursor: query.cursor
            }),
            rawJson(200)
          )
        ))
      .handle("getEvent", ({ params }) =>
        withIntegration((id) =>
          Effect.map(events.get(id, params.eventId), rawJson(200))
        ))
      .handle("redeliverEvent", ({ params }) => withIntegration((id) => events.redeliver(id, params.eventId)))
  }))
