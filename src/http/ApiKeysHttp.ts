import { HttpApiBuilder } from "effect/http-api"
import { CurrentIntegration, IntegrationsApi } from "@cop-integrations/contracts"
import { Effect } from "effect"
import { ApiKeyRepo } from "../auth/ApiKeyRepo.ts"
import { presentApiKey } from "../auth/PresentKey.ts"
import { now } from "../base/Clock.ts"

export const ApiKeysHttpLive = HttpApiBuilder.group(IntegrationsApi, "apiKeys", (handlers) =>
  Effect.gen(function*() {
    const keys = yield* ApiKeyRepo

    return handlers.handle("listApiKeys", () =>
      Effect.gen(function*() {
        const { integrationId, keyId } = yield* CurrentIntegration
        const rows = yield* keys.listOf(integrationId)
        const at = yield* now
        return { integrationId, items: rows.map((row) => presentApiKey(row, at, keyId)) }
      }))
  }))
