/**
 * The published document refuses what the service refuses. Each input below is sent to a mock deployment and checked
 * with Ajv (JSON Schema 2020-12) against the schema the served /openapi.json gives that part of the request (the body,
 * a header, a query or a path parameter): every one the service answers 400 (the contract's own rules, no errorCode)
 * the schema refuses too, and the valid ones both accept. A generated validator or form then never lets through what
 * is bound to fail, and never refuses what would work.
 *
 * The rules JSON Schema does not carry are listed at the end, each with why: the service refuses those inputs, the
 * document cannot, and its descriptions say so.
 */
import Ajv2020 from "ajv/dist/2020.js"
import addFormats from "ajv-formats"
import fc from "fast-check"
import { describe, expect } from "vitest"
import { IsoTimestamp } from "@cop-integrations/contracts"
import { Schema } from "effect"
import { httpTest } from "../support/fixture.ts"
import type { Partner } from "../support/flows.ts"
import { BREB, call, newAddress, newTxHash } from "../support/http.ts"
import type { TestServer } from "../support/server.ts"

type Json = Record<string, any>
type Method = "GET" | "POST" | "PATCH"
type Part = "body" | "header" | "query" | "path"

/** One request, and the value the document's schema of `part` is asked about (`name` for a parameter). */
interface Case {
  readonly title: string
  readonly method: Method
  readonly path: string
  readonly template: string
  readonly part: Part
  readonly name?: string
  readonly value: unknown
  readonly body?: unknown
  readonly headers?: Record<string, string>
  readonly query?: Record<string, string>
}

const it = httpTest()

let document: Json
it.beforeAll(async ({ server }) => {
  document = await fetch(`${server.baseUrl}/openapi.json`).then((answer) => answer.json())
})

const SWAPS = "/api/integrations/swaps"
const ENDPOINTS = "/api/integrations/webhook-endpoints"
const user = newAddress()

/** The schema the document gives `part` of the operation, with its references resolvable by Ajv. */
const schemaOf = (template: string, method: Method, part: Part, name?: string): Json => {
  const operation = document["paths"][template][method.toLowerCase()]
  const schema = part === "body"
    ? operation["requestBody"]["content"]["application/json"]["schema"]
    : operation["parameters"].find((parameter: Json) => parameter["in"] === part && parameter["name"] === name)?.[
      "schema"
    ]
  expect(schema, `${method} ${template}: no ${part} ${name ?? ""}`).toBeDefined()
  return schema
}

const validatorFor = (schema: Json) => {
  const defs = JSON.parse(
    JSON.stringify(document["components"]["schemas"]).replaceAll("#/components/schemas/", "#/$defs/")
  )
  const local = JSON.parse(JSON.stringify(schema).replaceAll("#/components/schemas/", "#/$defs/"))
  // Both are CommonJS modules whose `default` is the export (what an ES module import of them sees first).
  const ajv = new Ajv2020.default({ strict: true, allErrors: true })
  addFormats.default(ajv)
  return ajv.compile({ $defs: defs, ...local })
}

const schemaAccepts = (c: Case): boolean => validatorFor(schemaOf(c.template, c.method, c.part, c.name))(c.value)

const send = (server: TestServer, partner: Partner, c: Case) => {
  const query = c.query === undefined ? "" : `?${new URLSearchParams(c.query)}`
  return call(server, `${c.path}${query}`, {
    method: c.method,
    apiKey: partner.apiKey,
    ...(c.body === undefined ? {} : { body: c.body }),
    ...(c.headers === undefined ? {} : { headers: c.headers })
  })
}

const payout = (fields: Json) => ({
  userAddress: user,
  destinationCop: "250000",
  breBKey: "@maria2024",
  accountOwnerName: "Maria Perez",
  ...fields
})
const swap = (fields: Json) => ({ userAddress: user, fromToken: "USDC", toToken: "COPm", amountIn: "10", ...fields })

const PAYOUTS = `${BREB}/payouts`

/** A body for `template`, the case's value being the whole body. */
const body = (title: string, template: string, value: Json): Case => ({
  title,
  method: "POST",
  path: template.replace("{payoutId}", "po_none").replace("{intentId}", "sw_none"),
  template,
  part: "body",
  value,
  body: value
})
const createPayout = (title: string, fields: Json) => body(title, PAYOUTS, payout(fields))
/** An update of an endpoint that does not exist: a body the schema accepts is 404, one it refuses 400. */
const updateEndpoint = (title: string, value: Json): Case => ({
  title,
  method: "PATCH",
  path: `${ENDPOINTS}/we_none`,
  template: `${ENDPOINTS}/{endpointId}`,
  part: "body",
  value,
  body: value
})
const prepareSwap = (title: string, fields: Json) => body(title, SWAPS, swap(fields))

const header = (title: string, template: string, name: string, value: string, request: Partial<Case>): Case => ({
  title,
  method: "POST",
  path: template,
  template,
  part: "header",
  name,
  value,
  headers: { [name]: value },
  ...request
})

const query = (title: string, template: string, name: string, value: string, schemaValue: unknown = value): Case => ({
  title,
  method: "GET",
  path: template,
  template,
  part: "query",
  name,
  value: schemaValue,
  query: { [name]: value }
})

const pathParameter = (title: string, method: Method, template: string, name: string, value: string): Case => ({
  title,
  method,
  path: template.replace(`{${name}}`, encodeURIComponent(value)),
  template,
  part: "path",
  name,
  value,
  ...(method === "POST" ? { body: {} } : {})
})

const refused: ReadonlyArray<Case> = [
  createPayout("accountOwnerName empty", { accountOwnerName: "" }),
  createPayout("accountOwnerName only white space", { accountOwnerName: "   " }),
  createPayout("accountOwnerName 141 characters", { accountOwnerName: "a".repeat(141) }),
  createPayout("accountOwnerName with a newline", { accountOwnerName: "Maria\nPerez" }),
  createPayout("accountOwnerName missing", { accountOwnerName: undefined }),
  createPayout("quoteId empty", { quoteId: "" }),
  createPayout("quoteId white space", { quoteId: " " }),
  createPayout("quoteId 65 characters", { quoteId: "q".repeat(65) }),
  createPayout("quoteId with a NUL", { quoteId: "qt_\u0000" }),
  createPayout("breBKey empty", { breBKey: "" }),
  createPayout("breBKey of no form", { breBKey: "maria perez" }),
  createPayout("breBKey alias of 20 characters", { breBKey: `@${"a".repeat(20)}` }),
  createPayout("breBKey +57 mobile not starting with 3", { breBKey: "+572001234567" }),
  createPayout("destinationCop empty", { destinationCop: "" }),
  createPayout("destinationCop zero", { destinationCop: "0" }),
  createPayout("destinationCop zero with decimals", { destinationCop: "0.00" }),
  createPayout("destinationCop with an exponent", { destinationCop: "1e5" }),
  createPayout("destinationCop negative", { destinationCop: "-5" }),
  createPayout("destinationCop three decimals", { destinationCop: "100.123" }),
  createPayout("destinationCop a number", { destinationCop: 250000 }),
  createPayout("userAddress empty", { userAddress: "" }),
  createPayout("userAddress short", { userAddress: "0x1234" }),
  createPayout("fromToken lower case", { fromToken: "usdc" }),
  createPayout("an unknown field", { quoteID: "qt_1" }),
  body("email empty", `${BREB}/kyc/otp/send`, { email: "", userAddress: user }),
  body("email without a domain", `${BREB}/kyc/otp/send`, { email: "maria@", userAddress: user }),
  body("email without a top-level domain", `${BREB}/kyc/otp/send`, { email: "maria@example", userAddress: user }),
  body("email 255 characters", `${BREB}/kyc/otp/send`, {
    email: `${"a".repeat(60)}@${"b".repeat(63)}.${"c".repeat(63)}.${"d".repeat(63)}.com`,
    userAddress: user
  }),
  body("OTP userAddress empty", `${BREB}/kyc/otp/verify`, { userAddress: "", code: "123456" }),
  body("OTP code a number", `${BREB}/kyc/otp/verify`, { userAddress: user, code: 123456 }),
  body("txHash empty", `${PAYOUTS}/{payoutId}/confirm`, { txHash: "" }),
  body("txHash short", `${PAYOUTS}/{payoutId}/confirm`, { txHash: "0x1234" }),
  body("feeTxHash not hex", `${PAYOUTS}/{payoutId}/confirm`, { txHash: newTxHash(), feeTxHash: `0x${"z".repeat(64)}` }),
  body("swap txHash missing", `${SWAPS}/{intentId}/confirm`, {}),
  prepareSwap("amountIn empty", { amountIn: "" }),
  prepareSwap("amountIn with a trailing dot", { amountIn: "1." }),
  prepareSwap("amountIn negative", { amountIn: "-1" }),
  prepareSwap("amountIn zero", { amountIn: "0.000" }),
  prepareSwap("slippageBps 0", { slippageBps: 0 }),
  prepareSwap("slippageBps 501", { slippageBps: 501 }),
  prepareSwap("slippageBps not an integer", { slippageBps: 1.5 }),
  prepareSwap("fromToken unknown", { fromToken: "DAI" }),
  prepareSwap("toToken the same as fromToken", { fromToken: "COPm", toToken: "COPm" }),
  body("webhook url empty", ENDPOINTS, { url: "" }),
  body("webhook url with a newline", ENDPOINTS, { url: "http://127.0.0.1:9/\nhooks" }),
  body("webhook url 2049 characters", ENDPOINTS, { url: `http://127.0.0.1:9/${"a".repeat(2030)}` }),
  body("webhook events empty", ENDPOINTS, { url: "http://127.0.0.1:9/hooks", events: [] }),
  body("webhook event type unknown", ENDPOINTS, { url: "http://127.0.0.1:9/hooks", events: ["payout.lost"] }),
  body("webhook 33 event types", ENDPOINTS, {
    url: "http://127.0.0.1:9/hooks",
    events: Array.from({ length: 33 }, () => "*")
  }),
  body("advance to a status it cannot be moved to", "/api/integrations/test-helpers/payouts/{payoutId}/advance", {
    to: "expired"
  }),
  header("Idempotency-Key empty on a payout", PAYOUTS, "idempotency-key", "", { body: payout({}) }),
  header("Idempotency-Key 256 characters on a payout", PAYOUTS, "idempotency-key", "k".repeat(256), {
    body: payout({})
  }),
  header("Idempotency-Key empty on a swap", SWAPS, "idempotency-key", "", { body: swap({}) }),
  header("X-Mock-Scenario unknown", `${BREB}/quote`, "x-mock-scenario", "sunny_day", { method: "GET" }),
  query("quote destinationCop zero", `${BREB}/quote`, "destinationCop", "0"),
  query("quote destinationCop not a number", `${BREB}/quote`, "destinationCop", "abc"),
  query("quote fromToken unknown", `${BREB}/quote`, "fromToken", "DAI"),
  query("createdFrom not a timestamp", PAYOUTS, "createdFrom", "yesterday"),
  query("createdFrom on February 30", PAYOUTS, "createdFrom", "2026-02-30T00:00:00Z"),
  query("createdFrom on February 29 of a common year", PAYOUTS, "createdFrom", "2100-02-29T00:00:00Z"),
  query("createdFrom in month 13", SWAPS, "createdFrom", "2026-13-01T00:00:00Z"),
  query("createdFrom at hour 24", "/api/integrations/events", "createdFrom", "2026-11-22T24:00:00Z"),
  query("createdFrom with offset +24:00", PAYOUTS, "createdFrom", "2026-11-22T10:00:00+24:00"),
  query("cursor 513 characters", PAYOUTS, "cursor", "c".repeat(513)),
  query("limit 0", PAYOUTS, "limit", "0", 0),
  query("limit 501", SWAPS, "limit", "501", 501),
  query("event type unknown", "/api/integrations/events", "type", "payout.lost"),
  query("payout status unknown", PAYOUTS, "status", "done"),
  query("payout status of a swap", PAYOUTS, "status", "prepared"),
  query("swap status of a payout", SWAPS, "status", "completed"),
  query("createdTo not a timestamp", PAYOUTS, "createdTo", "tomorrow"),
  query("createdTo on February 30", SWAPS, "createdTo", "2026-02-30T00:00:00Z"),
  query("txHash short", PAYOUTS, "txHash", "0x1234"),
  query("txHash without 0x", PAYOUTS, "txHash", "a".repeat(64)),
  query("breBKeyLast4 of 3 characters", PAYOUTS, "breBKeyLast4", "024"),
  query("breBKeyLast4 of 5 characters", PAYOUTS, "breBKeyLast4", "20245"),
  query("breBKeyLast4 with a space", PAYOUTS, "breBKeyLast4", "20 4"),
  query("breBKeyLast4 not ASCII", PAYOUTS, "breBKeyLast4", "añ24"),
  query("resourceId empty", "/api/integrations/events", "resourceId", ""),
  query("resourceId 65 characters", "/api/integrations/events", "resourceId", "r".repeat(65)),
  query("resourceId with a newline", "/api/integrations/events", "resourceId", "po_\n1"),
  updateEndpoint("endpoint status unknown", { status: "paused" }),
  updateEndpoint("endpoint url empty", { url: "" }),
  updateEndpoint("endpoint events empty", { events: [] }),
  updateEndpoint("endpoint event type unknown", { events: ["payout.lost"] }),
  updateEndpoint("endpoint update with an unknown field", { status: "enabled", secret: "whsec_x" }),
  pathParameter("payoutId 65 characters", "GET", `${PAYOUTS}/{payoutId}`, "payoutId", "p".repeat(65)),
  pathParameter("payoutId with a newline", "GET", `${PAYOUTS}/{payoutId}`, "payoutId", "po_\n1"),
  pathParameter("intentId 65 characters", "GET", `${SWAPS}/{intentId}`, "intentId", "s".repeat(65)),
  pathParameter("eventId with a tab", "GET", "/api/integrations/events/{eventId}", "eventId", "evt_\t1"),
  pathParameter("endpointId 65 characters", "GET", `${ENDPOINTS}/{endpointId}`, "endpointId", "w".repeat(65)),
  pathParameter(
    "rejectKyc userAddress short",
    "POST",
    "/api/integrations/test-helpers/kyc/{userAddress}/reject",
    "userAddress",
    "0x1234"
  )
]

const accepted: ReadonlyArray<Case> = [
  createPayout("a valid payout body", {}),
  createPayout("accountOwnerName with accents", { accountOwnerName: "María José Ñúñez" }),
  createPayout("accountOwnerName of 140 emoji (140 characters, 280 UTF-16 units)", {
    accountOwnerName: "😀".repeat(140)
  }),
  createPayout("quoteId and fromToken", { quoteId: "qt_unknown", fromToken: "COPm" }),
  createPayout("breBKey mobile with +57", { breBKey: "+573001234567", destinationCop: "4000.50" }),
  createPayout("breBKey merchant code", { breBKey: "12345-AB" }),
  prepareSwap("a valid swap body", { slippageBps: 500 }),
  prepareSwap("a swap from COPm", { fromToken: "COPm", toToken: "USDC", amountIn: "5000" }),
  body("a valid OTP send", `${BREB}/kyc/otp/send`, { email: "maria.perez+co@example.com.co", userAddress: user }),
  body("a webhook endpoint", ENDPOINTS, { url: "http://127.0.0.1:9/hooks", events: ["payout.completed"] }),
  header("Idempotency-Key of 255 characters", PAYOUTS, "idempotency-key", "k".repeat(255), { body: payout({}) }),
  header("X-Mock-Scenario requote", `${BREB}/quote`, "x-mock-scenario", "requote", { method: "GET" }),
  query("createdFrom on February 29 of a leap year", PAYOUTS, "createdFrom", "2024-02-29T00:00:00Z"),
  query("createdFrom on February 29 of 2000", PAYOUTS, "createdFrom", "2000-02-29T23:59:59.999999999-05:00"),
  query("createdFrom without seconds", SWAPS, "createdFrom", "2026-11-22T03:19Z"),
  query("limit 500", PAYOUTS, "limit", "500", 500),
  query("payout status", PAYOUTS, "status", "refunded"),
  query("swap status", SWAPS, "status", "expired"),
  query("createdTo with an offset", PAYOUTS, "createdTo", "2026-11-22T03:19:32.123-05:00"),
  query("txHash in upper case", PAYOUTS, "txHash", `0x${"AB".repeat(32)}`),
  query("breBKeyLast4 of an e-mail key", PAYOUTS, "breBKeyLast4", ".com"),
  query("resourceId of a customer", "/api/integrations/events", "resourceId", user),
  updateEndpoint("endpoint disabled", { status: "disabled" }),
  updateEndpoint("endpoint url and events", { url: "http://127.0.0.1:9/hooks", events: ["payout.completed"] }),
  pathParameter("a payoutId", "GET", `${PAYOUTS}/{payoutId}`, "payoutId", "po_none")
]

describe("the document's request schemas refuse what the service refuses", () => {
  it("every input the service answers 400 for (the contract's rules), the published schema refuses", async ({ server, partner }) => {
    const disagreements: Array<string> = []
    for (const c of refused) {
      const answer = await send(server, partner, c)
      const refusedByService = answer.status === 400 && answer.body?.errorCode === undefined
      if (!refusedByService) disagreements.push(`${c.title}: the service answered ${answer.status} ${answer.text}`)
      if (schemaAccepts(c)) disagreements.push(`${c.title}: the document's schema accepts ${JSON.stringify(c.value)}`)
    }
    expect(disagreements).toEqual([])
  })

  it("valid inputs: the service does not answer 400 and the published schema accepts them", async ({ server, partner }) => {
    const disagreements: Array<string> = []
    for (const c of accepted) {
      const answer = await send(server, partner, c)
      if (answer.status === 400) disagreements.push(`${c.title}: the service answered 400 ${answer.text}`)
      if (!schemaAccepts(c)) disagreements.push(`${c.title}: the document's schema refuses ${JSON.stringify(c.value)}`)
    }
    expect(disagreements).toEqual([])
  })

  it("the rules JSON Schema does not carry: the service refuses these, the schema cannot (its description says so)", async ({ server, partner }) => {
    const lowercase = newAddress().toLowerCase()
    const beyondJsonSchema: ReadonlyArray<readonly [Case, string]> = [
      [createPayout("userAddress in lower case", { userAddress: lowercase }), "an EIP-55 checksum needs Keccak-256"],
      [prepareSwap("amountIn with more decimals than USDC has", { amountIn: "1.1234567" }), "depends on the token"],
      [createPayout("destinationCop above the Bre-B cap", { destinationCop: "1000000000" }), "the cap is configured"],
      [body("webhook url not a URL", ENDPOINTS, { url: "not a url" }), "URL rules differ by mode (https only live)"],
      [query("cursor not one this API gave", PAYOUTS, "cursor", "abc"), "a cursor is opaque"]
    ]
    for (const [c, why] of beyondJsonSchema) {
      const answer = await send(server, partner, c)
      expect(answer.status, `${c.title}: ${answer.text}`).toBe(400)
      expect(schemaAccepts(c), `${c.title} (${why})`).toBe(true)
    }
  })

  it("IsoTimestamp's published pattern accepts exactly what the contract's decoder accepts", () => {
    const pattern = new RegExp(document["components"]["schemas"]["IsoTimestamp"]["pattern"], "u")
    const decodes = Schema.is(IsoTimestamp)
    const two = (max: number) => fc.integer({ min: 0, max }).map((n) => String(n).padStart(2, "0"))
    const timestamp = fc.tuple(
      fc.integer({ min: 0, max: 9999 }).map((n) => String(n).padStart(4, "0")),
      two(14),
      two(32),
      two(25),
      two(61),
      fc.option(two(61)),
      fc.constantFrom("Z", "+05:30", "-24:00", "+23:59", "-00:60")
    ).map(([year, month, day, hour, minute, second, zone]) =>
      `${year}-${month}-${day}T${hour}:${minute}${second === null ? "" : `:${second}`}${zone}`
    )
    fc.assert(fc.property(timestamp, (value) => pattern.test(value) === decodes(value)), { numRuns: 20_000 })
    for (const leap of ["2000-02-29T00:00Z", "2024-02-29T00:00Z", "0000-02-29T00:00Z"]) {
      expect(pattern.test(leap) && decodes(leap), leap).toBe(true)
    }
    for (const common of ["1900-02-29T00:00Z", "2023-02-29T00:00Z", "2026-04-31T00:00Z"]) {
      expect(pattern.test(common) || decodes(common), common).toBe(false)
    }
  })
})
