/**
 * The `/docs#…` addresses of the contract's operations (testkit/src/docsAddress.ts), which the rules cite, open their
 * operation on the served reference page, in headless Chromium (Debian's `chromium`, or CHROMIUM_BIN): each address is
 * the id of the operation's section on the page, with the operation's heading. (Whether the page has scrolled to it
 * yet is left out: Scalar renders sections lazily, so content rendered above a section can move it after the jump,
 * which made that check flaky.) Where no Chromium binary exists the test is skipped, saying so loudly: it is never
 * counted as passed.
 */
import { existsSync } from "node:fs"
import { type Browser, chromium } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestServer, type TestServer } from "../../test/support/server.ts"
import { endpoints } from "../src/contract.ts"
import { docsFragment } from "../src/docsAddress.ts"

const chromiumBinary = [process.env["CHROMIUM_BIN"], "/usr/bin/chromium", "/usr/bin/chromium-browser"]
  .find((candidate): candidate is string => candidate !== undefined && candidate !== "" && existsSync(candidate))

if (chromiumBinary === undefined) {
  console.warn(
    "\n!!! testkit/test/rules-docs.test.ts SKIPPED: no Chromium binary (apt-get install chromium, or set CHROMIUM_BIN); the /docs addresses the rules cite were NOT checked !!!\n"
  )
}

describe.skipIf(chromiumBinary === undefined)("the /docs addresses rules cite, in headless Chromium", () => {
  let server: TestServer
  let browser: Browser
  beforeAll(async () => {
    server = await startTestServer()
    browser = await chromium.launch({
      executablePath: chromiumBinary!,
      args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-sync", "--no-first-run"]
    })
  })
  afterAll(async () => {
    await browser?.close()
    await server?.close()
  })

  it("each names its operation: the page has a section with that address and the operation's heading", async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } })
    await page.goto(`${server.baseUrl}/docs`, { waitUntil: "networkidle" })
    const shown: Record<string, string> = {}
    for (
      const fragment of [
        ...[...endpoints.keys()].map(docsFragment),
        "tag/bre-b/POST/api/integrations/breb/no-such-operation"
      ]
    ) {
      await page.evaluate((address) => (location.hash = address), fragment)
      // Scalar gives each operation's section an id ending in its address (a document prefix before it).
      const inView = await page.waitForFunction(
        (address) => {
          const section = [...document.querySelectorAll("[id]")].find((element) => element.id.endsWith(`/${address}`))
          return section?.querySelector("h1, h2, h3")?.textContent?.trim() || false
        },
        fragment,
        { timeout: 15_000 } // generous: under a loaded CI the page scrolls late; only the made-up address waits it out
      ).then((handle) => handle.jsonValue() as Promise<string>, () => "(not shown)")
      shown[fragment] = inView
    }
    expect(shown["tag/bre-b/POST/api/integrations/breb/payouts/{payoutId}/confirm"]).toBe("Confirm a payout deposit")
    expect(shown["tag/health/GET/readyz"]).toBe("Readiness")
    expect(shown["tag/bre-b/POST/api/integrations/breb/no-such-operation"]).toBe("(not shown)")
    expect(Object.entries(shown).filter(([, heading]) => heading === "(not shown)").map(([fragment]) => fragment))
      .toEqual(["tag/bre-b/POST/api/integrations/breb/no-such-operation"])
  }, 120_000)
})
