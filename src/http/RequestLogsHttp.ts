import { CurrentIntegration, IntegrationsApi } from "@cop-integrations/contracts"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { RequestLogs } from "../requestLogs/RequestLogs.ts"

export const RequestLogsHttpLive = HttpApiBuilder.group(
  IntegrationsApi,
  "requestLogs",
  (handlers) =>
    Effect.gen(function*() {
      const logs = yield* RequestLogs
      return handlers
        .handle(
          "listRequestLogs",
          ({ query }) => Effect.flatMap(CurrentIntegration, ({ integrationId }) => logs.list(integrationId, query))
        )
        .handle(
          "getRequestLog",
          ({ params }) =>
            Effect.flatMap(CurrentIntegration, ({ integrationId }) => logs.get(integrationId, params.requestId))
        )
    })
)
