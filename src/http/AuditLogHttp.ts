import { CurrentIntegration, IntegrationsApi } from "@cop-integrations/contracts"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { AuditEntries } from "../auth/AuditEntries.ts"

export const AuditLogHttpLive = HttpApiBuilder.group(
  IntegrationsApi,
  "auditLog",
  (handlers) =>
    Effect.gen(function*() {
      const audit = yield* AuditEntries
      return handlers.handle(
        "listAuditLog",
        ({ query }) => Effect.flatMap(CurrentIntegration, ({ integrationId }) => audit.list(integrationId, query))
      )
    })
)
