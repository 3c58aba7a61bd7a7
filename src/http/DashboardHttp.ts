import {
  Authentication,
  BadRequest,
  CurrentIntegration,
  Forbidden,
  IntegrationsApi,
  NotFound
} from "@cop-integrations/contracts"
import { Effect, Option } from "effect"
import { HttpServerRequest } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { DashboardSessions } from "../dashboard/DashboardSessions.ts"
import { hostnameOf, isLoopback } from "../dashboard/Hosts.ts"

const noSession = new NotFound({
  error: "no dashboard session: this request was authenticated with an API key, which has none"
})

/** The session the request was made with (its cookie), or 404 for a request made with a key. */
const currentSession = Effect.flatMap(
  CurrentIntegration,
  (current) =>
    current.session === undefined ? Effect.fail(noSession) : Effect.succeed({ ...current, ...current.session })
)

/** The cookie removed from the browser too (the session it named has ended on the server already). */
const clearCookie = Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
  const hostname = hostnameOf(request.headers["host"])
  return HttpApiBuilder.securitySetCookie(Authentication.security.dashboardSession, "", {
    httpOnly: true,
    secure: hostname === undefined || !isLoopback(hostname),
    sameSite: "strict",
    path: "/",
    maxAge: 0
  })
})

export const DashboardHttpLive = HttpApiBuilder.group(
  IntegrationsApi,
  "dashboard",
  (handlers) =>
    Effect.gen(function*() {
      const sessions = yield* DashboardSessions
      return handlers
        .handle("createDashboardSignInLink", () =>
          Effect.gen(function*() {
            const { integrationId, keyId, session } = yield* CurrentIntegration
            if (session !== undefined) {
              // A session could otherwise outlive itself, one link after another.
              return yield* new Forbidden({
                error: "a sign-in link is made with an API key (Authorization: Bearer …), not from a dashboard session"
              })
            }
            const request = yield* HttpServerRequest.HttpServerRequest
            const origin = sessions.originFor(request.headers["host"])
            if (Option.isNone(origin)) {
              return yield* new BadRequest({
                error: "Host: the request names no valid host for the link (the deployment can set PUBLIC_BASE_URL)"
              })
            }
            const link = yield* sessions.createLink({ integrationId, keyId }, origin.value)
            return { url: link.url, expiresAt: link.expiresAt.toISOString() }
          }))
        .handle("getDashboardSession", () =>
          Effect.map(currentSession, ({ csrfToken, expiresAt, integrationId, mode, sessionId }) => ({
            sessionId,
            integrationId,
            mode,
            expiresAt: expiresAt.toISOString(),
            csrfToken
          })))
        .handle("endDashboardSession", () =>
          Effect.gen(function*() {
            const { integrationId, sessionId } = yield* currentSession
            yield* sessions.end(sessionId, integrationId)
            yield* clearCookie
          }))
    })
)
