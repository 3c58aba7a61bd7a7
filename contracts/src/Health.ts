import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { ServiceUnavailableError } from "./Errors.ts"

export const Health = Schema.Struct({
  status: Schema.Literal("ok"),
  mode: Schema.Literals(["mock", "live"]),
  version: Schema.String
}).annotate({ identifier: "Health" })
export type Health = typeof Health.Type

export const Readiness = Schema.Struct({ status: Schema.Literal("ready") }).annotate({ identifier: "Readiness" })

export class HealthGroup extends HttpApiGroup.make("health", { topLevel: true })
  .add(
    HttpApiEndpoint.get("healthz", "/healthz", { success: Health })
      .annotate(OpenApi.Summary, "Liveness")
      .annotate(
        OpenApi.Description,
        "200 while the process serves HTTP; does not touch the database. `mode` tells mock and live deployments apart."
      ),
    HttpApiEndpoint.get("readyz", "/readyz", { success: Readiness, error: ServiceUnavailableError })
      .annotate(OpenApi.Summary, "Readiness")
      .annotate(
        OpenApi.Description,
        "200 only while the database answers within 2 seconds, else 503: route traffic on this."
      )
  )
  .annotate(OpenApi.Title, "Health")
  .annotate(OpenApi.Description, "Liveness and readiness probes for load balancers and orchestrators; no API key.")
{}
