/**
 * The partner dashboard: a client of the public API, signed in by its session cookie. Bundled by esbuild
 * (src/dashboard/PageBuild.ts) with Preact, served by the service at /dashboard under a strict Content-Security-Policy.
 */
import "./styles.css"
import type { DashboardSession } from "@cop-integrations/contracts"
import { render } from "preact"
import { useEffect, useState } from "preact/hooks"
import { ApiError, loadSession, onSignedOut, signOut } from "./api.ts"
import { DateTime, Failure, Loading, messageOf } from "./parts.tsx"
import { href, match, useRoute } from "./router.ts"
import { DEFAULT_ROUTE, views } from "./views.tsx"

type SessionState =
  | { readonly _tag: "loading" }
  | { readonly _tag: "signedIn"; readonly session: DashboardSession }
  | { readonly _tag: "signedOut"; readonly why: string }
  | { readonly _tag: "failed"; readonly error: unknown }

const SignedOut = ({ why }: { readonly why: string }) => (
  <main id="main" class="signed-out">
    <h1>Integrations dashboard</h1>
    <p role="status">{why}</p>
    <p>
      To sign in, open a new sign-in link: your back office makes one with an API key (
      <code>POST /api/integrations/dashboard/sessions</code>), or an operator with{" "}
      <code>npm run -s keys -- dashboard-link &lt;integration-name&gt;</code>.
    </p>
  </main>
)

const Shell = ({ onSignOut, session }: { readonly session: DashboardSession; readonly onSignOut: () => void }) => {
  const route = useRoute(DEFAULT_ROUTE)
  const found = views.flatMap((view) => {
    const params = match(view.path, route)
    return params === undefined ? [] : [{ view, params }]
  })[0]
  const [signOutError, setSignOutError] = useState<unknown>()
  return (
    <>
      <a class="skip" href="#main">Skip to content</a>
      <header class="top">
        {session.mode === "mock"
          ? (
            <p class="test-banner" data-testid="test-mode-banner">
              <strong>Test mode</strong>: sandbox data from test keys; nothing here moves real money.
            </p>
          )
          : null}
        <div class="bar">
          <p class="brand">Integrations dashboard</p>
          <p class="who">
            Integration <code>{session.integrationId}</code>, signed in until <DateTime iso={session.expiresAt} />
          </p>
          <button
            type="button"
            onClick={() => void signOut().then(onSignOut, (error: unknown) => setSignOutError(error))}
          >
            Sign out
          </button>
        </div>
      </header>
      {signOutError === undefined ? null : <Failure error={signOutError} />}
      <nav aria-label="Sections" class="sections">
        <ul>
          {views.filter((view) => view.nav !== undefined).map((view) => {
            const current = route === view.path || route.startsWith(`${view.path}/`)
            return (
              <li key={view.path}>
                <a href={href(view.path)} aria-current={current ? "page" : undefined}>{view.nav}</a>
              </li>
            )
          })}
        </ul>
      </nav>
      <main id="main" tabIndex={-1}>
        {found === undefined
          ? (
            <p role="alert">
              No such page: {route}. <a href={href(DEFAULT_ROUTE)}>Payouts</a>
            </p>
          )
          : <div key={route}>{found.view.render(found.params)}</div>}
      </main>
    </>
  )
}

const App = () => {
  const [state, setState] = useState<SessionState>({ _tag: "loading" })
  useEffect(() => {
    onSignedOut(() => setState({ _tag: "signedOut", why: "Your session has ended." }))
    loadSession().then(
      (session) => setState({ _tag: "signedIn", session }),
      (error: unknown) =>
        setState(
          error instanceof ApiError && error.status === 401
            ? { _tag: "signedOut", why: `Not signed in: ${messageOf(error)}` }
            : { _tag: "failed", error }
        )
    )
  }, [])
  switch (state._tag) {
    case "loading":
      return <Loading />
    case "failed":
      return <Failure error={state.error} />
    case "signedOut":
      return <SignedOut why={state.why} />
    case "signedIn":
      return (
        <Shell
          session={state.session}
          onSignOut={() => setState({ _tag: "signedOut", why: "You are signed out." })}
        />
      )
  }
}

render(<App />, document.getElementById("app")!)
