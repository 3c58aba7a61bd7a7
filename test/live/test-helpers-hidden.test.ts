/**
 * A live deployment has no test helpers (DESIGN: 404 in live mode), and nothing about a request under their path
 * may tell a prober otherwise: not a 400 for a bad body, a 401 for a missing key, a 405 for a method, a 413 or a
 * 415. Every request there is the same 404 ErrorBody. The service runs in live mode against the local live stack
 * (anvil, the provider simulator, the e-mail capture).
 */
import { request } from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type LiveStack, startLiveStack } from "../support/liveStack.ts"

let stack: LiveStack
let liveKey: string
let testKey: string
beforeAll(async () => {
  stack = await startLiveStack()
  liveKey = await stack.newLiveKey()
  testKey = (await stack.server.newIntegration("test")).apiKey
}, 120_000)
afterAll(() => stack?.close())

const ABSENT = { error: "test helpers exist only in mock (sandbox) deployments" }

const PATHS = [
  "/api/integrations/test-helpers/payouts/po_123/advance",
  "/api/integrations/test-helpers/kyc/0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed/reject",
  "/api/integrations/test-helpers/payouts/po_123",
  "/api/integrations/test-helpers/anything/below/here",
  "/api/integrations/test-helpers",
  "/api/integrations/test-helpers/",
  "/api/integrations/test-helpers/payouts/po_123/advance?to=completed",
  "/api/integrations/test-helpers/payouts/%ZZ/advance"
]

interface Variant {
  readonly method: string
  readonly body?: string
  readonly contentType?: string
}

const VARIANTS: ReadonlyArray<Variant> = [
  { method: "POST", body: JSON.stringify({ to: "completed" }), contentType: "application/json" },
  { method: "POST", body: JSON.stringify({ to: "nowhere", extra: 1 }), contentType: "application/json" },
  { method: "POST", body: "{not json", contentType: "application/json" },
  { method: "POST", body: "to=completed", contentType: "application/x-www-form-urlencoded" },
  { method: "POST", body: JSON.stringify({ to: "completed" }), contentType: "text/plain" },
  { method: "POST", body: `{"to":"completed","pad":"${"x".repeat(70 * 1024)}"}`, contentType: "application/json" },
  { method: "POST" },
  { method: "GET" },
  { method: "PUT", body: "{}", contentType: "application/json" },
  { method: "PATCH", body: "{}", contentType: "application/json" },
  { method: "DELETE" },
  { method: "OPTIONS" }
]

const authorizations =
  () => [`Bearer ${liveKey}`, undefined, "Bearer cop_live_pk_not-a-key", `Bearer ${testKey}`, "Basic Zm9vOmJhcg=="]

describe("test helpers in live mode", () => {
  it("answer 404 ErrorBody to every request under their path, whatever the method, path, body, content type or key", async () => {
    const others: Array<string> = []
    let sent = 0
    for (const path of PATHS) {
      for (const variant of VARIANTS) {
        for (const authorization of authorizations()) {
          const headers: Record<string, string> = {}
          if (authorization !== undefined) headers["authorization"] = authorization
          if (variant.contentType !== undefined) headers["content-type"] = variant.contentType
          const response = await fetch(`${stack.server.baseUrl}${path}`, {
            method: variant.method,
            headers,
            ...(variant.body === undefined ? {} : { body: variant.body })
          })
          const text = await response.text()
          sent += 1
          const wrong = response.status !== 404 || text !== JSON.stringify(ABSENT) ||
            !/^application\/json/.test(response.headers.get("content-type") ?? "") || response.headers.has("allow") ||
            response.headers.get("x-request-id") === null
          if (wrong) {
            others.push(
              `${variant.method} ${path.slice(28, 70)} ${variant.contentType ?? "-"} → ${response.status} ${
                text.slice(0, 90)
              }`
            )
          }
        }
      }
    }
    expect({ sent, notTheSame404: others.length }).toEqual({
      sent: PATHS.length * VARIANTS.length * 5,
      notTheSame404: 0
    })
    expect(others).toEqual([])
  })

  it("answer 404 to a HEAD and to a chunked body over 64 KiB", async () => {
    const head = await fetch(`${stack.server.baseUrl}/api/integrations/test-helpers/payouts/po_123/advance`, {
      method: "HEAD"
    })
    expect(head.status).toBe(404)

    const piece = new TextEncoder().encode(`{"to":"completed","pad":"${"x".repeat(4096)}`)
    let pieces = 0
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (pieces++ >= 40) return controller.close()
        controller.enqueue(piece)
      }
    })
    const init = {
      method: "POST",
      body,
      duplex: "half",
      headers: { authorization: `Bearer ${liveKey}`, "content-type": "application/json" }
    }
    const chunked = await fetch(`${stack.server.baseUrl}/api/integrations/test-helpers/payouts/po_123/advance`, init)
    expect({ status: chunked.status, body: await chunked.json() }).toEqual({ status: 404, body: ABSENT })
  })

  it("answer 404 to every spelling of their path that the router would take to them", async () => {
    const port = Number(new URL(stack.server.baseUrl).port)
    const spellings = [
      "/API/Integrations/Test-Helpers/payouts/po_123/advance",
      "/api/integrations/test%2Dhelpers/payouts/po_123/advance",
      "/api/integrations/%74est-helpers/kyc/0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed/reject",
      "//api/integrations/test-helpers/payouts/po_123/advance",
      "/api//integrations///test-helpers/payouts/po_123/advance",
      "/api/integrations/test-helpers;x=1/payouts/po_123/advance",
      "/api/integrations/./test-helpers/payouts/po_123/advance",
      "http://somewhere/api/integrations/test-helpers/payouts/po_123/advance"
    ]
    const answers = await Promise.all(spellings.map((path) =>
      new Promise<string>((resolve, reject) => {
        const sent = request({
          host: "127.0.0.1",
          port,
          method: "POST",
          path,
          headers: { authorization: `Bearer ${liveKey}`, "content-type": "application/json" }
        }, (res) => {
          let text = ""
          res.setEncoding("utf8")
          res.on("data", (chunk: string) => (text += chunk))
          res.on("end", () => resolve(`${path} → ${res.statusCode} ${text}`))
        })
        sent.on("error", reject)
        sent.end("{not json")
      })
    ))
    expect(answers).toEqual(spellings.map((path) => `${path} → 404 ${JSON.stringify(ABSENT)}`))
  })

  it("leave everything else as it was: a route that exists still answers 405 and 401, an unknown one 404", async () => {
    const quote = await fetch(`${stack.server.baseUrl}/api/integrations/breb/quote`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${liveKey}` }
    })
    expect(quote.status).toBe(405)
    expect((await fetch(`${stack.server.baseUrl}/api/integrations/breb/quote`)).status).toBe(401)
    const unknown = await fetch(`${stack.server.baseUrl}/api/integrations/test-helpersx/payouts`, {
      headers: { authorization: `Bearer ${liveKey}` }
    })
    expect(unknown.status).toBe(404)
    expect(await unknown.json()).toEqual({ error: "no such endpoint: GET /api/integrations/test-helpersx/payouts" })
  })
})
