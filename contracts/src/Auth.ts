import { Context } from "effect"
import { HttpApiMiddleware, HttpApiSecurity, OpenApi } from "effect/http-api"
import { ForbiddenError, TooManyRequestsError, UnauthorizedError } from "./Errors.ts"
import type { IntegrationId, KeyId } from "./Ids.ts"
import type { ApiScope } from "./Scopes.ts"

export type ApiMode = "mock" | "live"

/** The name of the dashboard's session cookie (HttpOnly: the page never reads it). */
export const DASHBOARD_SESSION_COOKIE = "cop_dashboard"

/** The header every change made with the dashboard's session cookie carries: the session's `csrfToken`. */
export const CSRF_HEADER = "X-CSRF-Token"

/** The dashboard session a request was authenticated with (none when it came with an API key). */
export interface DashboardSessionRef {
  /** `ds_…`: names the session (in logs too) without being its secret. */
  readonly sessionId: string
  readonly expiresAt: Date
  /** What a change made with this session must send as `X-CSRF-Token`. */
  readonly csrfToken: string
}

/**
 * The integration (partner) behind the current request: its bearer key, or the dashboard session signed in with a
 * link that key created (`keyId` is then that key, `session` the session).
 */
export class CurrentIntegration extends Context.Service<
  CurrentIntegration,
  {
    readonly integrationId: IntegrationId
    readonly keyId: KeyId
    readonly mode: ApiMode
    readonly session?: DashboardSessionRef
    /** A restricted key's scopes; absent for a full key (and a dashboard session, which only a full key opens). */
    readonly scopes?: ReadonlyArray<ApiScope>
  }
>()("CurrentIntegration") {}

/**
 * An API key (`bearer`), or the dashboard's session cookie (`dashboardSession`): either authenticates on its own. A
 * request with an `Authorization` header is authenticated by its key only; with the cookie, every method but GET and
 * HEAD must carry `X-CSRF-Token` (403 otherwise).
 */
export class Authentication extends HttpApiMiddleware.Service<Authentication, { provides: CurrentIntegration }>()(
  "Authentication",
  {
    error: [UnauthorizedError, ForbiddenError, TooManyRequestsError],
    security: {
      // Tried first, it passes to `bearer`, which decides for both (src/http/Authentication.ts): the platform answers
      // the last scheme's failure, and a refusal must say why.
      dashboardSession: HttpApiSecurity.apiKey({ key: DASHBOARD_SESSION_COOKIE, in: "cookie" }).pipe(
        HttpApiSecurity.annotate(
          OpenApi.Description,
          "The partner dashboard's session (`/dashboard`), set by opening a sign-in link from `POST /api/integrations/dashboard/sessions`. HttpOnly, SameSite=Strict; a request that also sends `Authorization` is authenticated by its key only. Every method but GET and HEAD must send the session's `csrfToken` as `X-CSRF-Token` (else 403)."
        )
      ),
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
