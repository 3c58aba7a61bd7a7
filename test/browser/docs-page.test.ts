/**
 * The API reference page in a real browser: headless Chromium (Debian's `chromium`, or CHROMIUM_BIN) driven by
 * playwright-core against a running mock-mode server. The page loads with no request to any host but the server,
 * lists every operation and every event type of the served document, and shows how to verify a webhook. Its "Test
 * Request", with the page's own pre-filled example and a test key pasted into the preselected bearer scheme, gets a
 * 2xx on every operation that takes a body (and on the quote, with an amount), clicked in the order a partner
 * follows; only path parameters are typed in, from the resources created before. Each operation's status is written
 * to .artifacts/docs-try-it.json, and a screenshot of the last answer kept beside it (CI keeps both). A second Send
 * of the payout creates a second payout (the page sends a new Idempotency-Key each time, not its example), and a
 * `/docs#error-…` anchor lands on its row of the errors table.
 * Where no Chromium binary exists the test is skipped, saying so loudly: it is never counted as passed.
 */
import { EventType } from "@cop-integrations/contracts"
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import type { Browser, Page, Response } from "playwright-core"
import { describe, expect } from "vitest"
import { chromiumBinary, launchChromium, warnIfNoChromium } from "../support/browser.ts"
import { httpTest } from "../support/fixture.ts"
import { repoRoot } from "../support/process.ts"
import type { TestServer } from "../support/server.ts"

/**
 * How long one page step (a render, a request the page sends, its answer taken in) may take: seconds on a quiet
 * machine; at load 10-16 Chromium renders the reference's bundle many times slower, and 20 s was not always enough.
 */
const STEP_DEADLINE_MS = 60_000
warnIfNoChromium("test/browser/docs-page.test.ts", "/docs")

const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"])
const withoutZeroWidth = (text: string) => text.replace(/\u200b/g, "").replace(/\s+/g, " ").trim()

interface Operation {
  readonly summary: string
  readonly operationId: string
  readonly requestBody?: unknown
  readonly parameters?: ReadonlyArray<{ readonly name: string; readonly in: string; readonly example?: unknown }>
}
interface Document {
  readonly paths: Record<string, Record<string, Operation>>
}

/**
 * One "Test Request": the operation as the document names it, the path parameters the test types in, and what a
 * 201 answer gives the later steps.
 */
interface TryIt {
  readonly method: "GET" | "POST" | "PATCH"
  readonly path: string
  readonly pathParameters?: () => Record<string, string | undefined>
  readonly creates?: (body: Record<string, unknown>) => Created
}

/** What a step created, for the path parameters of the steps after it. */
interface Created {
  payoutId?: string
  batchId?: string
  intentId?: string
  endpointId?: string
}

/** What each Try-it answered, for the report, and what was wrong with it (nothing when it worked). */
interface TryItResult {
  readonly operation: string
  readonly status: number
  readonly problems: ReadonlyArray<string>
}

// The test helpers move payouts in this test, not the mock lifecycle (which would complete it first).
const it = httpTest({ env: { MOCK_LIFECYCLE_DELAY_MS: "3600000" } })

describe.skipIf(chromiumBinary === undefined)("/docs in headless Chromium", () => {
  let browser: Browser
  let apiKey: string
  let document: Document
  let page: Page
  const elsewhere: Array<string> = []
  const pageErrors: Array<string> = []
  const loadFailures: Array<string> = []

  it.beforeAll(async ({ server, partner }) => {
    apiKey = partner.apiKey
    document = await fetch(`${server.baseUrl}/openapi.json`).then((answer) => answer.json()) as Document
    browser = await launchChromium()
    page = await openDocs(server) // once: loading the page and opening its groups takes seconds
  })
  it.afterEach(() => {
    expect(elsewhere).toEqual([])
    expect(pageErrors).toEqual([])
  })
  it.afterAll(() => browser?.close())

  /** /docs with every group open, recording requests elsewhere and page errors (checked after each test). */
  const openDocs = async (server: TestServer) => {
    const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } })
    await context.route("**/*", (route) => {
      const url = new URL(route.request().url())
      if (url.protocol === "data:" || LOOPBACK.has(url.hostname)) return route.continue()
      elsewhere.push(url.href)
      return route.abort()
    })
    const page = await context.newPage()
    page.on("pageerror", (error) => pageErrors.push(`page error: ${error.message}`))
    const onResponse = (response: Response) => {
      if (response.status() >= 400) loadFailures.push(`${response.status()} ${response.url()}`)
    }
    page.on("response", onResponse)
    await page.goto(`${server.baseUrl}/docs`, { waitUntil: "networkidle" })
    const openGroups = page.getByRole("button", { name: /^Open Group/ })
    while ((await openGroups.count()) > 0) await openGroups.first().click()
    page.off("response", onResponse)
    return page
  }

  const writeArtifact = (name: string, write: (path: string) => unknown) => {
    mkdirSync(join(repoRoot, ".artifacts"), { recursive: true })
    return write(join(repoRoot, ".artifacts", name))
  }

  it("loads from the server alone, lists every operation and event type, and shows how to verify a webhook", async () => {
    expect(loadFailures).toEqual([])
    const listed = new Set(
      (await page.getByRole("button").allInnerTexts()).map((text) => withoutZeroWidth(text.split("\n")[0] ?? ""))
    )
    const summaries = Object.values(document.paths).flatMap((item) =>
      Object.values(item).map((operation) => operation.summary)
    )
    expect(summaries.length).toBeGreaterThan(20)
    expect(summaries.filter((summary) => !listed.has(withoutZeroWidth(summary)))).toEqual([])
    expect(EventType.literals.filter((type) => !listed.has(type))).toEqual([])
    await expect.poll(() => page.getByText("webhook.verify(rawBody, headers)").count(), { timeout: STEP_DEADLINE_MS })
      .toBeGreaterThan(0)
  })

  it("shows each event's own example body: payout.completed's payout is completed, at sequence 4", async () => {
    const section = page.locator(`section[id$="/webhook/POST/payoutcompleted"]`)
    await section.scrollIntoViewIfNeeded({ timeout: STEP_DEADLINE_MS })
    await expect.poll(() => section.innerText(), { timeout: STEP_DEADLINE_MS }).toMatch(/"sequence": 4/)
    const shown = await section.innerText()
    expect(shown).toMatch(/"status": "completed"/)
    expect(shown).not.toMatch(/awaiting_deposit|"sequence": 1\b/)
  })

  it(
    "Test Request with the page's own example answers 2xx on every operation with a body, and on the quote",
    async () => {
      const created: Created = {}
      const sequence = partnerSequence(created)
      const withBody = Object.entries(document.paths).flatMap(([path, item]) =>
        Object.entries(item).filter(([, operation]) => operation.requestBody !== undefined).map(([method]) =>
          `${method.toUpperCase()} ${path}`
        )
      )
      expect(withBody.filter((operation) => !sequence.some((step) => `${step.method} ${step.path}` === operation)))
        .toEqual([])

      const results: Array<TryItResult> = []
      for (const step of sequence) {
        const operation = document.paths[step.path]![step.method.toLowerCase()]!
        const { body, result } = await tryIt(page, apiKey, operation, step)
        results.push(result)
        if (result.status === 201) Object.assign(created, step.creates?.(JSON.parse(body)))
      }
      await writeArtifact("docs-try-it.png", (path) => page.screenshot({ path }))
      writeArtifact("docs-try-it.json", (path) => writeFileSync(path, `${JSON.stringify(results, null, 2)}\n`))
      const lines = results.map(({ operation, problems, status }) =>
        `  ${operation}: ${status}${problems.length > 0 ? ` (${problems.join("; ")})` : ""}`
      )
      console.log(`Try-it results per operation:\n${lines.join("\n")}`)
      expect(results.filter((result) => result.problems.length > 0)).toEqual([])
    },
    // every step may take up to its deadline on a busy machine; the steps' sum, with margin
    600_000
  )

  it(
    "Send twice on create payout: two payouts, each sent with a new Idempotency-Key in place of the example",
    async ({ server }) => {
      // The example's user approved, as the OTP examples approve it (whether or not the test above ran).
      const served = await fetch(`${server.baseUrl}/openapi.json`).then((answer) => answer.json()) as {
        components: { schemas: Record<string, { examples?: Array<unknown> }> }
      }
      for (const [step, schema] of [["send", "OtpSendRequest"], ["verify", "OtpVerifyRequest"]] as const) {
        const answer = await fetch(`${server.baseUrl}/api/integrations/breb/kyc/otp/${step}`, {
          method: "POST",
          headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
          body: JSON.stringify(served.components.schemas[schema]!.examples![0])
        })
        expect([200, 429], `${step}: ${answer.status}`).toContain(answer.status) // 429: sent moments ago, still valid
      }
      const path = "/api/integrations/breb/payouts"
      const operation = document.paths[path]!["post"]!
      const example = operation.parameters?.find((parameter) => parameter.name === "idempotency-key")?.example
      expect(example).toBeTypeOf("string")
      const sent: Array<{ key: string | undefined; replayed: string | null; payoutId: unknown }> = []
      for (let send = 1; send <= 2; send++) {
        const { answer, body, result } = await tryIt(page, apiKey, operation, { method: "POST", path })
        expect(result.problems).toEqual([])
        expect(result.status).toBe(201)
        sent.push({
          key: answer!.request().headers()["idempotency-key"],
          replayed: await answer!.headerValue("idempotent-replayed"),
          payoutId: JSON.parse(body)["payoutId"]
        })
      }
      const [first, second] = sent
      expect(first!.key).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
      expect(second!.key).not.toBe(first!.key)
      expect(sent.map(({ key }) => key)).not.toContain(example)
      expect(sent.map(({ replayed }) => replayed)).toEqual([null, null])
      expect(second!.payoutId).not.toBe(first!.payoutId)
    },
    300_000
  )

  it(
    "lands on an errors table row from its anchor, as a message's /docs#error-… pointer and a response's link lead there",
    async ({ server }) => {
      // A page of its own, loaded at the anchor (on the page open above it would be a hash change only).
      const fresh = await page.context().newPage()
      fresh.on("pageerror", (error) => pageErrors.push(`page error: ${error.message}`))
      const inView = (id: string) =>
        fresh.evaluate((id) => {
          const element = window.document.getElementById(id)
          if (element === null) return "absent"
          const box = element.getBoundingClientRect()
          return box.top >= 0 && box.bottom <= window.innerHeight ? "in view" : `at ${Math.round(box.top)}`
        }, id)
      try {
        await fresh.goto(`${server.baseUrl}/docs#error-destination_mismatch`, { waitUntil: "networkidle" })
        await expect.poll(() => inView("error-destination_mismatch"), { timeout: STEP_DEADLINE_MS }).toBe("in view")
        // a response's link to its row changes the hash (Scalar renders the link; a click does the same)
        await fresh.evaluate(() => window.scrollTo(0, window.document.body.scrollHeight))
        expect(await inView("error-422")).not.toBe("in view")
        await fresh.evaluate(() => (location.hash = "error-422"))
        await expect.poll(() => inView("error-422"), { timeout: STEP_DEADLINE_MS }).toBe("in view")
      } finally {
        await fresh.close()
      }
    },
    300_000
  )
})

/**
 * What a partner tries in order: quote, KYC, a payee preview, a payout confirmed and moved on, a batch confirmed, a swap prepared and confirmed, a
 * webhook endpoint, an event triggered, a range replayed to the endpoint, the endpoint disabled. Path parameters name what an earlier step created.
 */
const partnerSequence = (created: Created): ReadonlyArray<TryIt> => [
  { method: "GET", path: "/api/integrations/breb/quote" },
  { method: "POST", path: "/api/integrations/breb/kyc/otp/send" },
  { method: "POST", path: "/api/integrations/breb/kyc/otp/verify" },
  { method: "POST", path: "/api/integrations/breb/destinations/preview" },
  {
    method: "POST",
    path: "/api/integrations/breb/payouts",
    creates: (body) => ({ payoutId: String(body["payoutId"]) })
  },
  {
    method: "POST",
    path: "/api/integrations/breb/payouts/{payoutId}/confirm",
    pathParameters: () => ({ payoutId: created.payoutId })
  },
  {
    method: "POST",
    path: "/api/integrations/test-helpers/payouts/{payoutId}/advance",
    pathParameters: () => ({ payoutId: created.payoutId })
  },
  {
    method: "POST",
    path: "/api/integrations/breb/payout-batches",
    creates: (body) => ({ batchId: String(body["batchId"]) })
  },
  {
    method: "POST",
    path: "/api/integrations/breb/payout-batches/{batchId}/confirm",
    pathParameters: () => ({ batchId: created.batchId })
  },
  { method: "POST", path: "/api/integrations/swaps", creates: (body) => ({ intentId: String(body["intentId"]) }) },
  {
    method: "POST",
    path: "/api/integrations/swaps/{intentId}/confirm",
    pathParameters: () => ({ intentId: created.intentId })
  },
  {
    method: "POST",
    path: "/api/integrations/webhook-endpoints",
    creates: (body) => ({ endpointId: String(body["endpointId"]) })
  },
  { method: "POST", path: "/api/integrations/test-helpers/events/trigger" },
  {
    method: "POST",
    path: "/api/integrations/webhook-endpoints/{endpointId}/replay",
    pathParameters: () => ({ endpointId: created.endpointId })
  },
  {
    method: "PATCH",
    path: "/api/integrations/webhook-endpoints/{endpointId}",
    pathParameters: () => ({ endpointId: created.endpointId })
  }
]

/**
 * Opens the operation's "Test Request", pastes the key (once: the page keeps it), types the path parameters and
 * sends what the page pre-filled. Bounded: a request the page never sends is recorded as such.
 */
const tryIt = async (page: Page, apiKey: string, operation: Operation, step: TryIt) => {
  const parameters = step.pathParameters?.() ?? {}
  const missing = Object.entries(parameters).filter(([, value]) => value === undefined).map(([name]) => name)
  const notSent = (why: string) => ({
    body: "",
    answer: undefined,
    result: { operation: operation.operationId, status: 0, problems: [`not sent: ${why}`] }
  })
  if (missing.length > 0) return notSent(`no ${missing.join(", ")}`)
  const section = page.locator(`section[id$="/${step.method}${step.path}"]`)
  const snippet = await section.innerText() // the reference's own curl snippet, as a partner copies it
  await section.getByRole("button", { name: /Test Request/ }).click()
  const token = page.locator("input[placeholder=\"Token\"][id^=\"scalar-client\"]")
  if ((await token.inputValue()) === "") await token.fill(apiKey)
  for (const [name, value] of Object.entries(parameters)) await typePathParameter(page, name, value!)
  const path = Object.entries(parameters).reduce((path, [name, value]) => path.replace(`{${name}}`, value!), step.path)
  const send = page.getByRole("button", { name: new RegExp(`Send ${step.method.toLowerCase()} request to`) })
  const [answer] = await Promise.all([
    page.waitForResponse(
      (response) => response.request().method() === step.method && new URL(response.url()).pathname === path,
      { timeout: STEP_DEADLINE_MS }
    ).catch(() => undefined),
    send.click()
  ])
  // Closed once the page has taken the answer in (closed sooner, the next request's Send stays disabled).
  await expect.poll(() => send.isEnabled(), { timeout: STEP_DEADLINE_MS }).toBe(true)
  await page.keyboard.press("Escape")
  if (answer === undefined) return notSent(`the page sent no request to ${path}`)
  const body = await answer.text()
  const status = answer.status()
  return {
    body,
    answer,
    result: { operation: operation.operationId, status, problems: problemsOf(apiKey, operation, answer, body, snippet) }
  }
}

/** Everything wrong with one Try-it: its answer, or what the page sent or shows. */
const problemsOf = (apiKey: string, operation: Operation, answer: Response, body: string, snippet: string) => {
  const request = answer.request()
  const headers = request.headers()
  const takesKey = (operation.parameters ?? []).some((parameter) => parameter.name === "idempotency-key")
  const amount = new URL(request.url()).searchParams.get("destinationCop") ?? ""
  return [
    ...(answer.status() >= 200 && answer.status() < 300 ? [] : [`answered ${body.slice(0, 200)}`]),
    ...[...snippet.matchAll(/--header '([^':]+): '/g)].map((m) => `the page's curl snippet sends an empty ${m[1]}`),
    ...Object.entries(headers).filter(([, value]) => value === "").map(([name]) => `sent an empty ${name} header`),
    ...(takesKey && !headers["idempotency-key"] ? ["sent no idempotency-key"] : []),
    ...(headers["authorization"] === `Bearer ${apiKey}` ? [] : ["sent without the pasted key"]),
    ...(operation.operationId === "breb.quote" && !/^[1-9]/.test(amount) ? ["a quote without an amount"] : [])
  ]
}

/**
 * Types `value` into the open request's path parameter `name`: a parameter with examples is a menu (its "Add value"
 * opens an input), one without is an editor cell. Tab leaves it (Enter would send the request at once).
 */
const typePathParameter = async (page: Page, name: string, value: string) => {
  const row = page.locator(`tr#${name}`)
  const menu = row.locator("button[aria-haspopup=menu]")
  if ((await menu.count()) > 0) {
    await menu.click()
    await page.getByRole("menuitem", { name: "Add value" }).click()
  } else {
    await row.locator("td").nth(2).click()
  }
  await page.keyboard.type(value)
  await page.keyboard.press("Tab")
}
