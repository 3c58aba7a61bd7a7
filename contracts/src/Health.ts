import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { ServiceUnavailableError } from "./Errors.ts"

export const Health = Schema.Struct({
  status: Schema.Literal("ok"),
  mode: Schema.Literal("mock", "live"),
  version: Schema.String
}).annotations({ identifier: "Health" })
export type Health = typeof Health.Type

export const Readiness = Schema.Struct({ status: Schema.Literal("ready") }).annotations({ identifier: "Readiness" })

export class HealthGroup extends HttpApiGroup.make("health", { topLevel: true })
  .add(HttpApiEndpoint.get("healthz", "/healthz").addSuccess(Health))
  .add(HttpApiEndpoint.get("readyz", "/readyz").addSuccess(Readiness).addError(ServiceUnavailableError))
  .annotate(OpenApi.Title, "Health")
{}
