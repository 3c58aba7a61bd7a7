import { INTERFACE_VERSION, IntegrationsApi, ServiceUnavailable } from "@cop-integrations/contracts"
import { Effect, Fiber } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { SqlClient } from "effect/sql"
import { Deployment } from "../auth/Deployment.ts"
import { databaseAnswers } from "../db/Readiness.ts"

/** /readyz answers 503 when the database has not answered `SELECT 1` within this. */
const READINESS_TIMEOUT = "2 seconds"

/**
 * Runs `probe` on a fiber of its own: interrupting the wait returns at once, and the probe's own interruption
 * (cancelling it on a stalled connection, which can take longer) finishes in the background.
 */
const detached = <A, E, R>(probe: Effect.Effect<A, E, R>) =>
  Effect.flatMap(
    Effect.forkDetach(probe),
    (fiber) => Effect.onInterrupt(Fiber.join(fiber), () => Effect.forkDetach(Fiber.interrupt(fiber)))
  )

export const HealthHttpLive = HttpApiBuilder.group(IntegrationsApi, "health", (handlers) =>
  Effect.gen(function*() {
    const { mode } = yield* Deployment
    const sql = yield* SqlClient.SqlClient
    return handlers
      .handle("healthz", () => Effect.succeed({ status: "ok", mode, version: INTERFACE_VERSION } as const))
      .handle("readyz", () =>
        databaseAnswers(sql).pipe(
          // Answers within the bound even when the probe's clean-up takes longer.
          detached,
          Effect.timeout(READINESS_TIMEOUT),
          Effect.as({ status: "ready" } as const),
          Effect.catch(() => Effect.fail(new ServiceUnavailable({ error: "database unreachable" })))
        ))
  }))
