import { Clock, Effect, Result } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { DASHBOARD_SESSION_COOKIE } from "@cop-integrations/contracts"
import { type Asset, assetVersion, makeAsset, serveAsset } from "../base/StaticAsset.ts"
import { DASHBOARD_PATH, DashboardSessions, SIGN_IN_PATH, type SignInRefusal } from "./DashboardSessions.ts"
import { hostnameOf, isLoopback } from "./Hosts.ts"
import type { PageFiles } from "./PageBuild.ts"
import { prebuiltPage } from "./PagePrebuilt.ts"

export const DASHBOARD_SCRIPT_PATH = "/dashboard/app.js"
export const DASHBOARD_STYLES_PATH = "/dashboard/app.css"

/** The paths the dashboard serves besides the API (the router's known routes, for 405s). */
export const DASHBOARD_PATHS = [DASHBOARD_PATH, DASHBOARD_SCRIPT_PATH, DASHBOARD_STYLES_PATH, SIGN_IN_PATH] as const

/**
 * Nothing but this server, and nothing inline: the page's script and styles are files of its own, so a value the API
 * answers can never run as code, and no request leaves for another host (the page works offline).
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'"
].join("; ")

const PAGE_HEADERS = {
  "content-security-policy": CONTENT_SECURITY_POLICY,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cross-origin-opener-policy": "same-origin"
}

const pageHtml = (scriptUrl: string, stylesUrl: string) =>
  `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>Dashboard · Integrations API</title>
    <link rel="icon" href="data:," />
    <link rel="stylesheet" href="${stylesUrl}" />
    <script type="module" src="${scriptUrl}"></script>
  </head>
  <body>
    <div id="app"><noscript>The dashboard needs JavaScript.</noscript></div>
  </body>
</html>
`

interface DashboardAssets {
  readonly page: Asset
  readonly script: Asset
  readonly styles: Asset
}

/** Their URLs change with their content: cached for good. */
const immutable = { "cache-control": "public, max-age=31536000, immutable", "x-content-type-options": "nosniff" }

const makeAssets = ({ css, js }: PageFiles): DashboardAssets => {
  const script = makeAsset(js, { "content-type": "text/javascript; charset=utf-8", ...immutable })
  const styles = makeAsset(css, { "content-type": "text/css; charset=utf-8", ...immutable })
  const html = pageHtml(
    `${DASHBOARD_SCRIPT_PATH}?v=${assetVersion(script)}`,
    `${DASHBOARD_STYLES_PATH}?v=${assetVersion(styles)}`
  )
  // Revalidated on every load (304 while unchanged), so a new deployment's page is never mixed with an old script.
  const page = makeAsset(html, {
    "content-type": "text/html; charset=utf-8",
    "cache-control": "no-cache",
    ...PAGE_HEADERS
  })
  return { page, script, styles }
}

/** The page's files: built into the server's bundle, or else built here from the sources (./PageBuild.ts). */
const loadPage: Effect.Effect<PageFiles> = prebuiltPage !== undefined
  ? Effect.succeed(prebuiltPage)
  : Effect.promise(async () => {
    const [{ buildPage }, esbuild] = await Promise.all([import("./PageBuild.ts"), import("esbuild")])
    return buildPage(esbuild)
  })

const refusals: Record<SignInRefusal, { readonly status: number; readonly title: string; readonly text: string }> = {
  unknown: {
    status: 401,
    title: "This sign-in link is not valid",
    text: "Check that the whole link was copied, or ask for a new one."
  },
  used: {
    status: 410,
    title: "This sign-in link was used already",
    text: "Each link signs in once. Ask for a new one."
  },
  expired: {
    status: 410,
    title: "This sign-in link has expired",
    text: "A link works for five minutes after it is made. Ask for a new one."
  }
}

const NO_STORE = { "cache-control": "no-store", "referrer-policy": "no-referrer" }

/** A plain page saying why the link signs nobody in; no cookie. */
const refusedPage = (refusal: SignInRefusal) => {
  const { status, text, title } = refusals[refusal]
  return HttpServerResponse.text(
    `<!doctype html>
<html lang="en">
  <head><meta charset="utf-8" /><title>${title}</title><link rel="icon" href="data:," /></head>
  <body><main><h1>${title}</h1><p>${text}</p><p>Sign-in links are made with an API key: <code>POST /api/integrations/dashboard/sessions</code>, or <code>npm run -s keys -- dashboard-link &lt;integration-name&gt;</code> on the server.</p></main></body>
</html>
`,
    { status, contentType: "text/html; charset=utf-8", headers: { ...PAGE_HEADERS, ...NO_STORE } }
  )
}

/**
 * Opens the link's session: the cookie (HttpOnly, SameSite=Strict, Secure unless the page is on loopback, where
 * browsers allow plain http), then 303 to the page, so the token leaves the address bar and the history.
 */
const signIn = (sessions: typeof DashboardSessions.Service) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const token = new URL(request.url, "http://localhost").searchParams.get("token") ?? ""
    const opened = yield* sessions.signIn(token)
    if (Result.isFailure(opened)) return refusedPage(opened.failure)
    const { expiresAt, sessionToken } = opened.success
    const now = yield* Clock.currentTimeMillis
    const hostname = hostnameOf(request.headers["host"])
    return HttpServerResponse.redirect(DASHBOARD_PATH, { status: 303, headers: NO_STORE }).pipe(
      HttpServerResponse.setCookieUnsafe(DASHBOARD_SESSION_COOKIE, sessionToken, {
        httpOnly: true,
        secure: hostname === undefined || !isLoopback(hostname),
        sameSite: "strict",
        path: "/",
        maxAge: `${Math.max(1, Math.floor((expiresAt.getTime() - now) / 1000))} seconds`
      })
    )
  })

/** `/dashboard` (the page, its script and styles, built on first use and kept) and its sign-in link's route. */
export const DashboardPageLive = HttpRouter.use((router) =>
  Effect.gen(function*() {
    const sessions = yield* DashboardSessions
    const assets = yield* Effect.cached(Effect.map(loadPage, makeAssets))
    yield* router.add("GET", DASHBOARD_PATH, Effect.flatMap(assets, ({ page }) => serveAsset(page)))
    yield* router.add("GET", DASHBOARD_SCRIPT_PATH, Effect.flatMap(assets, ({ script }) => serveAsset(script)))
    yield* router.add("GET", DASHBOARD_STYLES_PATH, Effect.flatMap(assets, ({ styles }) => serveAsset(styles)))
    yield* router.add("GET", SIGN_IN_PATH, signIn(sessions))
  })
)
