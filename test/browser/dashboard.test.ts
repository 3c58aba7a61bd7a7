/**
 * The partner dashboard in a real browser: headless Chromium (Debian's `chromium`, or CHROMIUM_BIN) driven by
 * playwright-core against a running mock-mode server. It signs in with a link the API made, sees a payout created
 * through the API (amounts exactly as the API wrote them) and narrows the payouts by status, adds a webhook endpoint
 * pointing at a real receiver (the secret shown once) and rotates its secret, resends an event and sees the receiver
 * get it (signed with the new secret) and the attempt listed, with the receiver's answer, on the event's and the
 * payout's page, disables and enables the endpoint, opens a failing request's log entry, sees the partner's key among
 * the API keys, signs out and is refused after, and is refused with an expired link. No request
 * leaves for another host, nothing breaks the page's Content-Security-Policy, and axe-core finds no serious or
 * critical accessibility violation on any view. Screenshots of each view go to .artifacts/dashboard-*.png.
 * Where no Chromium binary exists the test is skipped, saying so loudly: it is never counted as passed.
 */
import axe from "axe-core"
import { mkdirSync } from "node:fs"
import { join } from "node:path"
import type { Browser, BrowserContext, Page } from "playwright-core"
import { Webhook } from "standardwebhooks"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { describe, expect } from "vitest"
import { hashToken } from "../../src/dashboard/Tokens.ts"
import { chromiumBinary, launchChromium, warnIfNoChromium } from "../support/browser.ts"
import { raw, signInLink } from "../support/dashboard.ts"
import { httpTest } from "../support/fixture.ts"
import { newTxHash, PAYOUTS, payoutBody } from "../support/flows.ts"
import { repoRoot } from "../support/process.ts"
import { type Receiver, startReceiver } from "../support/webhookReceiver.ts"

/** How long one page step may take: well under a second on a quiet machine, generous for a loaded one. */
const STEP_DEADLINE_MS = 30_000
warnIfNoChromium("test/browser/dashboard.test.ts", "/dashboard")

const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"])

// The payout stays where the API left it (the mock lifecycle would move a confirmed one on).
const it = httpTest({ env: { MOCK_LIFECYCLE_DELAY_MS: "3600000" } })

interface AxeViolation {
  readonly id: string
  readonly impact: string | null
  readonly help: string
  readonly nodes: ReadonlyArray<{ readonly target: ReadonlyArray<string> }>
}

describe.skipIf(chromiumBinary === undefined)("/dashboard in headless Chromium", () => {
  let browser: Browser
  let context: BrowserContext
  let page: Page
  let receiver: Receiver
  const elsewhere: Array<string> = []
  const pageErrors: Array<string> = []

  it.beforeAll(async () => {
    receiver = await startReceiver()
    browser = await launchChromium()
    // A viewer in Bogotá: dates in their zone, UTC on hover.
    context = await browser.newContext({ viewport: { width: 1280, height: 900 }, timezoneId: "America/Bogota" })
    await context.route("**/*", (route) => {
      const url = new URL(route.request().url())
      if (url.protocol === "data:" || LOOPBACK.has(url.hostname)) return route.continue()
      elsewhere.push(url.href)
      return route.abort()
    })
    page = await context.newPage()
    page.setDefaultTimeout(STEP_DEADLINE_MS)
    page.on("pageerror", (error) => pageErrors.push(`page error: ${error.message}`))
    // A violation of the page's Content-Security-Policy is reported on the console.
    page.on("console", (message) => {
      if (message.type() === "error" && /Content Security Policy|Refused to/i.test(message.text())) {
        pageErrors.push(`console: ${message.text()}`)
      }
    })
  })
  it.afterEach(() => {
    expect(elsewhere).toEqual([])
    expect(pageErrors).toEqual([])
  })
  it.afterAll(async () => {
    await browser?.close()
    await receiver?.close()
  })

  const screenshot = async (name: string) => {
    mkdirSync(join(repoRoot, ".artifacts"), { recursive: true })
    await page.screenshot({ path: join(repoRoot, ".artifacts", `dashboard-${name}.png`), fullPage: true })
  }

  /**
   * axe-core on the page as it is: its source evaluated through the DevTools protocol (a <script> tag would be
   * inline code, which the page's CSP refuses, and turning the CSP off would hide the page's own violations).
   */
  const accessibilityProblems = async (view: string) => {
    await page.evaluate(axe.source)
    const violations = await page.evaluate(async () => {
      const run = (window as unknown as { axe: typeof axe }).axe.run
      const results = await run(document, { resultTypes: ["violations"] })
      return results.violations.map(({ help, id, impact, nodes }) => ({
        id,
        impact: impact ?? null,
        help,
        nodes: nodes.map((node) => ({ target: node.target.map(String) }))
      }))
    }) as ReadonlyArray<AxeViolation>
    const serious = violations.filter((violation) => violation.impact === "serious" || violation.impact === "critical")
    if (violations.length > serious.length) {
      console.log(
        `axe on ${view}, minor or moderate (allowed): ${violations.map((v) => `${v.id} (${v.impact})`).join(", ")}`
      )
    }
    return serious.map((violation) =>
      `${view}: ${violation.id} (${violation.impact}) ${violation.help} at ${
        violation.nodes.map((node) => node.target.join(" ")).join(", ")
      }`
    )
  }

  /** Polls `read` until the matcher holds, up to a page step's deadline (vitest's own default is one second). */
  const eventually = <A>(read: () => A | Promise<A>) => expect.poll(read, { timeout: STEP_DEADLINE_MS, interval: 100 })

  const viewChecked = async (name: string) => {
    await screenshot(name)
    expect(await accessibilityProblems(name)).toEqual([])
  }

  /** A section's link in the navigation. */
  const section = (name: string) =>
    page.getByRole("navigation", { name: "Sections" }).getByRole("link", { name, exact: true })

  /** The first `td` texts of the row whose first cell reads `first`. */
  const rowOf = (first: string) =>
    page.getByRole("row").filter({ has: page.getByRole("cell", { name: first, exact: true }) })

  /** The value of a view's field (its `Fields` row) labelled `label`. */
  const field = (label: string) =>
    page.locator(".fields > div").filter({ has: page.getByRole("term").getByText(label, { exact: true }) })
      .getByRole("definition")

  let payout: {
    readonly payoutId: string
    readonly destinationCop: string
    readonly sourceAmount: string
    readonly createdAt: string
  }

  it("signs in with a link made with the API key, lands on /dashboard without the token, and shows test mode", async ({ server, partner, user }) => {
    payout = await partner.payout(user)
    const swap = await partner.post("/api/integrations/swaps", {
      userAddress: user,
      fromToken: "USDC",
      toToken: "COPm",
      amountIn: "10"
    })
    expect(swap.status, swap.text).toBe(201)
    const link = await signInLink(server, partner.apiKey)
    await page.goto(link.url)
    await eventually(() => page.url()).toBe(`${server.baseUrl}/dashboard`)
    await eventually(() => page.getByTestId("test-mode-banner").isVisible()).toBe(true)
    expect(await page.getByText(partner.integrationId).count()).toBeGreaterThan(0)
    const cookies = await context.cookies()
    expect(cookies.map(({ httpOnly, name, sameSite }) => ({ name, httpOnly, sameSite }))).toEqual([
      { name: "cop_dashboard", httpOnly: true, sameSite: "Strict" }
    ])
    // Nothing the page keeps: no key, no token in its storage.
    expect(await page.evaluate(() => localStorage.length + sessionStorage.length)).toBe(0)
  })

  it("lists the payout created through the API, its amounts as the API wrote them, dates local with UTC on hover", async () => {
    await section("Payouts").click()
    const row = rowOf(payout.payoutId)
    await eventually(() => row.count()).toBe(1)
    const cells = await row.getByRole("cell").allInnerTexts()
    expect(cells).toContain(`${payout.destinationCop} COP`)
    expect(cells).toContain(`${payout.sourceAmount} USDC`)
    expect(await row.locator("time").getAttribute("title")).toBe(`${payout.createdAt} (UTC)`)
    expect(await row.locator("time").innerText()).toBe(
      new Date(payout.createdAt).toLocaleString("en-US", { timeZone: "America/Bogota" })
    )
    await viewChecked("payouts")
  })

  it("opens the payout's page: status, timeline, fees, receipt", async () => {
    await page.getByRole("link", { name: payout.payoutId }).click()
    await eventually(() => page.getByRole("heading", { name: `Payout ${payout.payoutId}` }).isVisible()).toBe(true)
    await eventually(() => page.getByRole("heading", { name: "Timeline" }).isVisible()).toBe(true)
    expect(await page.getByRole("table", { name: "Fee legs" }).getByRole("row").count()).toBeGreaterThan(1)
    // Keyboard: the view's heading has the focus, and Tab reaches a control.
    expect(await page.evaluate(() => document.activeElement?.tagName)).toBe("H1")
    await viewChecked("payout")
  })

  it("filters the payouts by status: the list narrows to the payouts in it", async ({ partner, user }) => {
    const confirmed = await partner.payout(user)
    const confirming = await partner.confirm(confirmed.payoutId, { txHash: newTxHash() })
    expect(confirming.status, confirming.text).toBe(200)
    expect((confirming.json as { status: string }).status).toBe("deposit_confirmed")

    await section("Payouts").click()
    await eventually(() => rowOf(confirmed.payoutId).count()).toBe(1)
    expect(await rowOf(payout.payoutId).count()).toBe(1)
    const status = page.getByLabel("Status")
    const apply = page.getByRole("button", { name: "Apply filters" })
    await status.selectOption("deposit_confirmed")
    await apply.click()
    await eventually(() => rowOf(payout.payoutId).count()).toBe(0)
    expect(await rowOf(confirmed.payoutId).count()).toBe(1)
    await viewChecked("payouts-filtered")

    await status.selectOption("awaiting_deposit")
    await apply.click()
    await eventually(() => rowOf(confirmed.payoutId).count()).toBe(0)
    expect(await rowOf(payout.payoutId).count()).toBe(1)
  })

  it("shows the swaps", async () => {
    await section("Swaps").click()
    await eventually(() => page.getByRole("table", { name: /Swaps/ }).getByRole("row").count()).toBe(2)
    await viewChecked("swaps")
  })

  let endpointId: string
  let secret: string

  it("adds a webhook endpoint for a real receiver (its secret shown once), pings it and rotates its secret", async () => {
    await section("Webhook endpoints").click()
    await page.getByLabel("URL").fill(receiver.url)
    await page.getByRole("button", { name: "Add endpoint" }).click()
    const shown = page.getByTestId("secret")
    await eventually(() => shown.count()).toBe(1)
    const first = await shown.innerText()
    expect(first).toMatch(/^whsec_/)
    endpointId = (await page.getByRole("status").filter({ hasText: "Created" }).innerText()).match(/we_\w+/)![0]
    await eventually(() => rowOf(endpointId).count()).toBe(1)
    await viewChecked("webhooks")

    await page.getByRole("button", { name: `Ping ${endpointId}` }).click()
    const ping = await receiver.next((delivery) => delivery.event.type === "endpoint.ping", STEP_DEADLINE_MS)
    expect(new Webhook(first).verify(ping.body, headersOf(ping))).toBeTruthy()

    await page.getByRole("button", { name: `Rotate secret ${endpointId}` }).click()
    await page.getByRole("button", { name: `Confirm rotation (${endpointId})` }).click()
    await eventually(() => page.getByText("the old one also signs for 24 hours").count()).toBe(1)
    secret = await shown.innerText()
    expect(secret).toMatch(/^whsec_/)
    expect(secret).not.toBe(first)
    await screenshot("webhooks-rotated")
  })

  let eventId: string

  it("resends the payout's event and the receiver gets it, signed with the new secret; the attempt is listed", async () => {
    await section("Events").click()
    await page.getByLabel("Type").selectOption("payout.created")
    await page.getByRole("button", { name: "Apply filters" }).click()
    const row = page.getByRole("row").filter({ hasText: payout.payoutId })
    await eventually(() => row.count()).toBe(1)
    await viewChecked("events")
    await row.getByRole("link").click()
    await eventually(() => page.getByRole("heading", { name: /^Event evt_/ }).isVisible()).toBe(true)
    eventId = (await page.getByRole("heading", { name: /^Event evt_/ }).innerText()).slice("Event ".length)

    await page.getByRole("button", { name: "Resend" }).click()
    await eventually(() => page.getByText(`Queued to ${endpointId}.`).count()).toBe(1)
    const delivery = await receiver.next((d) => d.event.id === eventId, STEP_DEADLINE_MS)
    expect(delivery.event.data.object["payoutId"]).toBe(payout.payoutId)
    expect(new Webhook(secret).verify(delivery.body, headersOf(delivery))).toBeTruthy()

    const attempts = page.getByRole("table", { name: /delivery attempt/ })
    await expect.poll(async () => {
      await page.getByRole("button", { name: "Refresh attempts" }).click()
      return attempts.getByRole("row").filter({ hasText: endpointId }).filter({ hasText: "200" }).count()
    }, { timeout: STEP_DEADLINE_MS }).toBe(1)
    // The start of the receiver's answer (it answers "ok").
    expect(await attempts.getByRole("row").filter({ hasText: endpointId }).getByRole("cell").last().innerText())
      .toBe("ok")
    await viewChecked("event")
  })

  it("shows the payout's events on its page, each with every delivery attempt", async () => {
    await section("Payouts").click()
    await page.getByRole("link", { name: payout.payoutId }).click()
    const attempts = page.getByRole("table", { name: `Delivery attempts of ${eventId}, oldest first` })
    await eventually(() => attempts.count()).toBe(1)
    expect(await page.getByRole("heading", { level: 3, name: `${eventId} payout.created` }).count()).toBe(1)
    const row = attempts.getByRole("row").filter({ hasText: endpointId })
    expect(await row.count()).toBe(1)
    const cells = await row.getByRole("cell").allInnerTexts()
    expect(cells).toContain("succeeded")
    expect(cells).toContain("200")
    expect(cells.at(-1)).toBe("ok")
    await viewChecked("payout-events")
  })

  it("disables the endpoint, then enables it again; its state shows each time", async ({ partner }) => {
    const endpointState = async () =>
      (await partner.get(`/api/integrations/webhook-endpoints/${endpointId}`)).json as { status: string }
    await section("Webhook endpoints").click()
    const state = rowOf(endpointId).locator(".status")
    await eventually(() => state.innerText()).toBe("enabled")

    await page.getByRole("button", { name: `Disable ${endpointId}` }).click()
    await page.getByRole("button", { name: `Confirm disable (${endpointId})` }).click()
    await eventually(() => state.innerText()).toBe("disabled")
    expect((await endpointState()).status).toBe("disabled")
    // A disabled endpoint offers Enable, not Disable or Ping.
    expect(await page.getByRole("button", { name: `Ping ${endpointId}` }).count()).toBe(0)
    await viewChecked("webhooks-disabled")

    await page.getByRole("button", { name: `Enable ${endpointId}` }).click()
    await eventually(() => state.innerText()).toBe("enabled")
    expect((await endpointState()).status).toBe("enabled")
    expect(await page.getByRole("button", { name: `Disable ${endpointId}` }).count()).toBe(1)
  })

  it("opens a failing request's log entry from the list of 4xx requests", async ({ partner, user }) => {
    const failing = await partner.post(PAYOUTS, payoutBody(user, { destinationCop: "a lot" }))
    expect(failing.status, failing.text).toBe(400)
    const requestId = failing.headers.get("x-request-id")
    expect(requestId).toBeTruthy()

    await section("Request logs").click()
    await page.getByLabel("Status class").selectOption("4xx")
    await page.getByRole("button", { name: "Apply filters" }).click()
    // Requests are logged off the request path, in batches: the entry comes a moment after the answer.
    const row = rowOf(requestId!)
    await expect.poll(async () => {
      await page.getByRole("button", { name: "Refresh", exact: true }).click()
      return row.count()
    }, { timeout: STEP_DEADLINE_MS, interval: 250 }).toBe(1)
    // Only 4xx answers are listed, though the dashboard's own 2xx requests are logged too.
    const statuses = await page.getByRole("table", { name: "Requests, newest first" }).locator(
      "tbody tr td:nth-child(5)"
    )
      .allInnerTexts()
    expect(statuses.length).toBeGreaterThan(0)
    expect(statuses.filter((status) => !/^4\d\d$/.test(status))).toEqual([])
    await viewChecked("request-logs")

    await row.getByRole("link", { name: requestId! }).click()
    await eventually(() => page.getByRole("heading", { name: `Request ${requestId}` }).isVisible()).toBe(true)
    expect(await field("Request id").innerText()).toBe(requestId)
    expect(await field("Status").innerText()).toBe("400")
    expect(await field("Method").innerText()).toBe("POST")
    expect(await field("Path").innerText()).toBe(PAYOUTS)
    expect(await field("Message").innerText()).toContain("destinationCop")
    expect(await field("Key").innerText()).toContain(partner.apiKey.slice(-4))
    expect(await field("Made with").innerText()).toBe("the API key")
    await viewChecked("request-log")

    // The dashboard's own change (enabling the endpoint, above) names this session.
    const session = (await page.evaluate(async () => (await fetch("/api/integrations/dashboard/session")).json())) as {
      sessionId: string
    }
    await page.getByRole("link", { name: "All requests" }).click()
    await page.getByLabel("Status class").selectOption("2xx")
    await page.getByLabel("Path starts with").fill(`/api/integrations/webhook-endpoints/${endpointId}`)
    await page.getByRole("button", { name: "Apply filters" }).click()
    const patch = page.getByRole("row").filter({ hasText: "PATCH" }).first()
    await expect.poll(async () => {
      await page.getByRole("button", { name: "Refresh", exact: true }).click()
      return patch.count()
    }, { timeout: STEP_DEADLINE_MS, interval: 250 }).toBe(1)
    await patch.getByRole("link").first().click()
    await eventually(() => field("Made with").innerText()).toBe(`the dashboard (session ${session.sessionId})`)
    expect(await field("Key").innerText()).toContain(partner.apiKey.slice(-4))
  })

  it("lists the integration's API keys: the partner's key by its last 4, active, the one this session was made with", async ({ partner }) => {
    await section("API keys").click()
    const row = rowOf(`…${partner.apiKey.slice(-4)}`)
    await eventually(() => row.count()).toBe(1)
    const cells = await row.getByRole("cell").allInnerTexts()
    expect(cells).toContain("active this session's key")
    // The key itself is never on the page.
    expect(await page.content()).not.toContain(partner.apiKey)
    await viewChecked("api-keys")
  })

  it("signs out: the session ends on the server, so the old cookie is refused", async ({ server }) => {
    const [cookie] = await context.cookies()
    await page.getByRole("button", { name: "Sign out" }).click()
    await eventually(() => page.getByText("You are signed out.").count()).toBe(1)
    await viewChecked("signed-out")
    expect(await context.cookies()).toEqual([])
    const refused = await raw(server, PAYOUTS, { headers: { cookie: `cop_dashboard=${cookie!.value}` } })
    expect(refused.status).toBe(401)
    await page.goto(`${server.baseUrl}/dashboard`)
    await eventually(() => page.getByText(/Not signed in/).count()).toBe(1)
  })

  it("refuses an expired link: no cookie, a page saying so", async ({ server, partner }) => {
    const link = await signInLink(server, partner.apiKey)
    await server.run(
      Effect.flatMap(
        SqlClient.SqlClient,
        (sql) =>
          sql`UPDATE dashboard_sign_in_links SET expires_at = now() - interval '1 millisecond'
          WHERE token_hash = ${hashToken(link.token)}`
      )
    )
    const answer = await page.goto(link.url)
    expect(answer?.status()).toBe(410)
    await eventually(() => page.getByRole("heading", { name: "This sign-in link has expired" }).count()).toBe(1)
    expect(await context.cookies()).toEqual([])
    await viewChecked("expired-link")
  })
})

const headersOf = (delivery: { readonly id: string; readonly timestamp: string; readonly signature: string }) => ({
  "webhook-id": delivery.id,
  "webhook-timestamp": delivery.timestamp,
  "webhook-signature": delivery.signature
})
