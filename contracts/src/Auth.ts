import { Context } from "effect"
import { HttpApiMiddleware, HttpApiSecurity, OpenApi } from "effect/http-api"
import { TooManyRequestsError, UnauthorizedError } from "./Errors.ts"
import type { IntegrationId, KeyId } from "./Ids.ts"

export type ApiMode = "mock" | "live"

/** The integration (partner) behind the bearer key of the current request. */
export class CurrentIntegration extends Context.Service<
  CurrentIntegration,
  { readonly integrationId: IntegrationId; readonly keyId: KeyId; readonly mode: ApiMode }
>()("CurrentIntegration") {}

export class Authentication extends HttpApiMiddleware.Service<Authentication, { provides: CurrentIntegration }>()(
  "Authentication",
  {
    error: [UnauthorizedError, TooManyRequestsError],
    security: {
      // `HttpApiSecurity.bearer` says `Bearer`; the document has always said `bearer` (schemes are case-insensitive).
      bearer: HttpApiSecurity.http({ scheme: "bearer" }).pipe(
        HttpApiSecurity.annotate(
          OpenApi.Description,
          "Integration API key: `cop_test_pk_...` in mock deployments, `cop_live_pk_...` in live ones"
        )
      )
    }
  }
) {}
