import { Effect } from "effect"
import { ok, rejected } from "../api.ts"
import { check } from "../check.ts"
import { show } from "../failure.ts"
import { scenario } from "../scenario.ts"

/** How long a sign-in link may be valid, with room for the clocks of the kit's machine and the deployment. */
const LINK_MINUTES = 5
const CLOCK_SLACK_MS = 2 * 60_000

export const dashboardScenarios = [
  scenario({
    id: "DASH-001",
    title:
      "a dashboard sign-in link made with the key names /dashboard/sign-in with a token and expires within five minutes; a key has no dashboard session (404)",
    rules: ["R-DASH-1"],
    tags: ["dashboard"],
    run: (kit) =>
      Effect.gen(function*() {
        const reply = yield* kit.call("createDashboardSignInLink")
        const link = yield* ok(reply, "201 DashboardSignInLink")
        const url = URL.canParse(link.url) ? new URL(link.url) : undefined
        yield* check(
          url !== undefined && url.pathname === "/dashboard/sign-in" &&
            /^[\w-]{32,}$/.test(url.searchParams.get("token") ?? ""),
          "the link opens /dashboard/sign-in with its token",
          {
            expected: "an absolute URL: …/dashboard/sign-in?token=<token>",
            actual: show(link.url),
            exchange: reply.exchange
          }
        )
        const validMs = Date.parse(link.expiresAt) - Date.now()
        yield* check(
          validMs > -CLOCK_SLACK_MS && validMs <= LINK_MINUTES * 60_000 + CLOCK_SLACK_MS,
          "the link expires within five minutes",
          {
            expected: `expiresAt within ${LINK_MINUTES} minutes from now`,
            actual: show(link.expiresAt),
            exchange: reply.exchange
          }
        )
        const session = yield* kit.call("getDashboardSession")
        yield* rejected(session, 404, "none", "GET dashboard/session with a key is 404: a key has no session")
      })
  })
]
