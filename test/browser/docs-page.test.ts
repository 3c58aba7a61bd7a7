/**
 * The API reference page in a real browser: headless Chromium (Debian's `chromium`, or CHROMIUM_BIN) driven by
 * playwright-core against a running server. The page loads with no request to any host but the server, lists
 * every operation of the served document, and its "Test Request" of the quote, with a test key pasted into the
 * preselected bearer scheme, gets 200. A screenshot of that answer is kept in .artifacts/ (CI keeps it).
 * Where no Chromium binary exists the test is skipped, saying so loudly: it is never counted as passed.
 */
import { existsSync, mkdirSync } from "node:fs"
import { join } from "node:path"
import { type Browser, chromium } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { repoRoot } from "../support/process.ts"
import { startTestServer, type TestServer } from "../support/server.ts"

const chromiumBinary = [
  process.env["CHROMIUM_BIN"],
  "/usr/bin/chromium",
  "/usr/bin/chromium-browser",
  "/usr/bin/google-chrome"
]
  .find((candidate): candidate is string => candidate !== undefined && candidate !== "" && existsSync(candidate))

if (chromiumBinary === undefined) {
  console.warn(
    "\n!!! test/browser/docs-page.test.ts SKIPPED: no Chromium binary (apt-get install chromium, or set CHROMIUM_BIN); the /docs page was NOT checked in a browser !!!\n"
  )
}

const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"])
const withoutZeroWidth = (text: string) => text.replace(/\u200b/g, "").replace(/\s+/g, " ").trim()

describe.skipIf(chromiumBinary === undefined)("/docs in headless Chromium", () => {
  let server: TestServer
  let browser: Browser
  let apiKey: string

  beforeAll(async () => {
    server = await startTestServer()
    ;({ apiKey } = await server.newIntegration())
    browser = await chromium.launch({
      executablePath: chromiumBinary!,
      // As root Chromium needs --no-sandbox; the rest keeps it from calling Google's services at start.
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run"
      ]
    })
  })
  afterAll(async () => {
    await browser?.close()
    await server?.close()
  })

  it("loads from the server alone, lists every operation, and its Test Request of the quote with a test key gets 200", async () => {
    const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } })
    const elsewhere: Array<string> = []
    await context.route("**/*", (route) => {
      const url = new URL(route.request().url())
      if (url.protocol === "data:" || LOOPBACK.has(url.hostname)) return route.continue()
      elsewhere.push(url.href)
      return route.abort()
    })
    const page = await context.newPage()
    const failures: Array<string> = []
    page.on("response", (response) => {
      if (response.status() >= 400) failures.push(`${response.status()} ${response.url()}`)
    })
    page.on("pageerror", (error) => failures.push(`page error: ${error.message}`))

    await page.goto(`${server.baseUrl}/docs`, { waitUntil: "networkidle" })
    const openGroups = page.getByRole("button", { name: /^Open Group/ })
    while ((await openGroups.count()) > 0) await openGroups.first().click()
    const listed = new Set(
      (await page.getByRole("button").allInnerTexts()).map((text) => withoutZeroWidth(text.split("\n")[0] ?? ""))
    )
    const document = await fetch(`${server.baseUrl}/openapi.json`).then((answer) => answer.json()) as {
      paths: Record<string, Record<string, { summary: string }>>
    }
    const summaries = Object.values(document.paths).flatMap((item) =>
      Object.values(item).map((operation) => operation.summary)
    )
    expect(summaries.length).toBeGreaterThan(20)
    expect(summaries.filter((summary) => !listed.has(withoutZeroWidth(summary)))).toEqual([])

    await page.getByRole("button", { name: /^Get a BRE.*-B quote/ }).first().click()
    await page.getByRole("button", { name: /Test Request/ }).first().click()
    const token = page.locator("input[placeholder=\"Token\"][id^=\"scalar-client\"]")
    await token.fill(apiKey)
    const [quote] = await Promise.all([
      page.waitForResponse((response) => new URL(response.url()).pathname === "/api/integrations/breb/quote"),
      page.getByRole("button", { name: /Send get request to/ }).click()
    ])
    expect(quote.status()).toBe(200)
    expect(quote.request().headers()["authorization"]).toBe(`Bearer ${apiKey}`)
    expect(Object.keys(quote.request().headers())).not.toContain("x-mock-scenario")
    await expect.poll(() => page.getByText("1 USD =").count()).toBeGreaterThan(0)

    mkdirSync(join(repoRoot, ".artifacts"), { recursive: true })
    await page.screenshot({ path: join(repoRoot, ".artifacts", "docs-try-it.png") })
    expect(elsewhere).toEqual([])
    expect(failures).toEqual([])
    await context.close()
  })
})
