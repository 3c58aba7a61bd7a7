import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Authentication } from "./Auth.ts"
import { groupErrors } from "./Breb.ts"
import { ForbiddenError, NotFoundError } from "./Errors.ts"
import { IntegrationId } from "./Ids.ts"
import { IsoTimestamp } from "./Primitives.ts"

export const DashboardSignInLink = Schema.Struct({
  url: Schema.String.annotate({
    description:
      "Opens the dashboard signed in as this integration: one use, within `expiresAt`. Hand it to a person over a channel you trust; it is as good as a session until used."
  }),
  expiresAt: IsoTimestamp.annotate({ description: "Five minutes after it was made" })
}).annotate({
  identifier: "DashboardSignInLink",
  description: "A one-time sign-in link to the partner dashboard",
  examples: [{
    url: "https://api.example.com/dashboard/sign-in?token=q3Zl0C7pYJb2m4xk8Qv1sTgWfHnR5uE9aLdK6oPiBcM",
    expiresAt: "2026-11-22T03:24:32.123Z"
  }]
})
export type DashboardSignInLink = typeof DashboardSignInLink.Type

export const DashboardSession = Schema.Struct({
  sessionId: Schema.String.annotate({
    description: "The session's id, as the request logs name it (`dashboardSessionId`); not a credential"
  }),
  integrationId: IntegrationId,
  mode: Schema.Literals(["mock", "live"]).annotate({ description: "`mock`: a sandbox (test keys, test data)" }),
  expiresAt: IsoTimestamp.annotate({ description: "When the session ends unless signed out before" }),
  csrfToken: Schema.String.annotate({
    description: "Send it as `X-CSRF-Token` with every change (any method but GET and HEAD) made with this session"
  })
}).annotate({
  identifier: "DashboardSession",
  description: "The dashboard session this request was made with",
  examples: [{
    sessionId: "ds_7Rk2mQ9vLc4KtX1sWb3aZp",
    integrationId: IntegrationId.make("int_4hQpZ2mX9vLc7KtR1sWb3a"),
    mode: "mock",
    expiresAt: "2026-11-22T15:19:32.123Z",
    csrfToken: "Xo4t8kQ2mZr6Lw1VbN9yCj3HsPd5fGa7TeU0iRlMqEc"
  }]
})
export type DashboardSession = typeof DashboardSession.Type

/** The partner dashboard's sign-in (a one-time link) and its session. */
export class DashboardGroup extends HttpApiGroup.make("dashboard")
  .add(
    HttpApiEndpoint.post("createDashboardSignInLink", "/dashboard/sessions", {
      success: DashboardSignInLink.pipe(HttpApiSchema.status(201)),
      error: [...groupErrors, ForbiddenError]
    })
      .annotate(OpenApi.Summary, "Create a one-time sign-in link to the dashboard")
      .annotate(
        OpenApi.Description,
        "With an API key (not from a dashboard session: 403), no body. Opening `url` within five minutes signs its opener in to `/dashboard` as this integration, once: an HttpOnly session cookie (12 hours unless the deployment says otherwise), bound to this integration and ended when this key is revoked or expires. Call it from your own back office for the person who asked; never put a key in a browser."
      ),
    HttpApiEndpoint.get("getDashboardSession", "/dashboard/session", {
      success: DashboardSession,
      error: [...groupErrors, NotFoundError]
    })
      .annotate(OpenApi.Summary, "The current dashboard session")
      .annotate(
        OpenApi.Description,
        "With the dashboard's session cookie: the integration, the mode, when the session ends and its CSRF token. With an API key, 404 (a key has no session)."
      ),
    HttpApiEndpoint.delete("endDashboardSession", "/dashboard/session", {
      success: HttpApiSchema.NoContent,
      error: [...groupErrors, NotFoundError]
    })
      .annotate(OpenApi.Summary, "Sign out of the dashboard")
      .annotate(
        OpenApi.Description,
        "Ends the session of the cookie it comes with, on the server: the cookie authenticates nothing after it (401). Needs `X-CSRF-Token`. With an API key, 404."
      )
  )
  .middleware(Authentication)
  .prefix("/api/integrations")
  .annotate(OpenApi.Title, "Dashboard")
  .annotate(
    OpenApi.Description,
    "The partner dashboard at `/dashboard`: a page of this service that calls this API with a session cookie instead of a key. Sign-in is a one-time link made with a key."
  )
{}
