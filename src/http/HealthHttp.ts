import { HttpApiBuilder } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { INTERFACE_VERSION, IntegrationsApi, ServiceUnavailable } from "@cop-integrations/contracts"
import { Effect } from "effect"
import { Deployment } from "../auth/Deployment.ts"
import { databaseAnswers } from "../db/Readiness.ts"

/** /readyz answers 503 when the database has not answered `SELECT 1` within this. */
const READINESS_TIMEOUT = "2 seconds"

export const HealthHttpLive = HttpApiBuilder.group(IntegrationsApi, "health", (handlers) =>
  Effect.gen(function*() {
    const { mode } = yield* Deployment
    const sql = yield* SqlClient.SqlClient
    return handlers
      .handle("healthz", () => Effect.succeed({ status: "ok", mode, version: INTERFACE_VERSION } as const))
      .handle("readyz", () =>
        databaseAnswers(sql).pipe(
          // Answers within the bound even when the probe's clean-up (cancelling it on a stalled
          // connection) takes longer: that finishes in the background.
          Effect.disconnect,
          Effect.timeout(READINESS_TIMEOUT),
          Effect.as({ status: "ready" } as const),
          Effect.catchAll(() => Effect.fail(new ServiceUnavailable({ error: "database unreachable" })))
        ))
  }))
