import { HttpApiBuilder } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { INTERFACE_VERSION, IntegrationsApi, ServiceUnavailable } from "@cop-integrations/contracts"
import { Effect } from "effect"
import { AppConfig } from "../Config.ts"

export const HealthHttpLive = HttpApiBuilder.group(IntegrationsApi, "health", (handlers) =>
  Effect.gen(function*() {
    const config = yield* AppConfig
    const sql = yield* SqlClient.SqlClient
    return handlers
      .handle("healthz", () => Effect.succeed({ status: "ok", mode: config.mode, version: INTERFACE_VERSION } as const))
      .handle("readyz", () =>
        sql`SELECT 1`.pipe(
          Effect.timeout("2 seconds"),
          Effect.as({ status: "ready" } as const),
          Effect.catchAll(() => Effect.fail(new ServiceUnavailable({ error: "database unreachable" })))
        ))
  }))
