import { HttpApiMiddleware, HttpApiSecurity, OpenApi } from "@effect/platform"
import { Context, Schema } from "effect"
import { TooManyRequestsError, UnauthorizedError } from "./Errors.ts"
import type { IntegrationId, KeyId } from "./Ids.ts"

export type ApiMode = "mock" | "live"

/** The integration (partner) behind the bearer key of the current request. */
export class CurrentIntegration extends Context.Tag("CurrentIntegration")<
  CurrentIntegration,
  { readonly integrationId: IntegrationId; readonly keyId: KeyId; readonly mode: ApiMode }
>() {}

export class Authentication extends HttpApiMiddleware.Tag<Authentication>()("Authentication", {
  failure: Schema.Union(UnauthorizedError, TooManyRequestsError),
  provides: CurrentIntegration,
  security: {
    bearer: HttpApiSecurity.bearer.pipe(
      HttpApiSecurity.annotate(
        OpenApi.Description,
        "Integration API key: `cop_test_pk_...` in mock deployments, `cop_live_pk_...` in live ones"
      )
    )
  }
}) {}
