/**
 * POSTs that take no body (ping, rotate-secret, the KYC reject helper) sent the way `fetch` sends an empty string
 * body: `Content-Length: 0` with `Content-Type: text/plain;charset=UTF-8`. An empty body needs no content type, so
 * such a request is answered exactly as the same request without one; a body that is not empty and not JSON is
 * still 415. Raw `fetch` here, so the headers on the wire are what a partner's client sends.
 */
import { describe, expect } from "vitest"
import { httpTest } from "../support/fixture.ts"
import type { Partner } from "../support/flows.ts"
import { BREB, call, expectErrorBody } from "../support/http.ts"
import type { TestServer } from "../support/server.ts"

const it = httpTest()

let endpointId: string
const USER = "0x52908400098527886E0F7030069857D2E4169EE7"

it.beforeAll(async ({ server, partner }) => {
  const created = await call(server, "/api/integrations/webhook-endpoints", {
    apiKey: partner.apiKey,
    body: { url: "http://127.0.0.1:9/hooks" }
  })
  expect(created.status).toBe(201)
  endpointId = created.body.endpointId
  // the reject helper needs a customer: KYC through the mock OTP
  const sent = await call(server, `${BREB}/kyc/otp/send`, {
    apiKey: partner.apiKey,
    body: { email: "ana@example.com", userAddress: USER }
  })
  const verified = await call(server, `${BREB}/kyc/otp/verify`, {
    apiKey: partner.apiKey,
    body: { userAddress: USER, code: sent.body.debugCode }
  })
  expect(verified.body.kycStatus).toBe("approved")
})
const post = (
  server: TestServer,
  partner: Partner,
  path: string,
  init: { readonly body?: string; readonly contentType?: string }
) =>
  fetch(`${server.baseUrl}${path}`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${partner.apiKey}`,
      ...(init.contentType === undefined ? {} : { "content-type": init.contentType })
    },
    ...(init.body === undefined ? {} : { body: init.body })
  }).then(async (response) => ({ status: response.status, text: await response.text() }))

const bodyless = () => [
  { name: "ping", path: `/api/integrations/webhook-endpoints/${endpointId}/ping`, status: 202 },
  { name: "rotate-secret", path: `/api/integrations/webhook-endpoints/${endpointId}/rotate-secret`, status: 200 },
  { name: "the KYC reject helper", path: `/api/integrations/test-helpers/kyc/${USER}/reject`, status: 200 }
]

describe("a POST that takes no body", () => {
  it("with fetch's empty string body (Content-Type: text/plain, Content-Length: 0) is answered as without a type", async ({ server, partner }) => {
    for (const { name, path, status } of bodyless()) {
      const untyped = await post(server, partner, path, {})
      const plain = await post(server, partner, path, { body: "" })
      const typed = await post(server, partner, path, { body: "", contentType: "text/plain" })
      expect([name, untyped.status, plain.status, typed.status]).toEqual([name, status, status, status])
    }
  })

  it("with a body that is not empty and not JSON is still 415 ErrorBody, which its operation declares", async ({ server, partner }) => {
    const document = await fetch(`${server.baseUrl}/openapi.json`).then((answer) => answer.json()) as {
      paths: Record<string, { post?: { responses: Record<string, unknown> } }>
    }
    for (
      const path of [
        "/api/integrations/webhook-endpoints/{endpointId}/ping",
        "/api/integrations/webhook-endpoints/{endpointId}/rotate-secret",
        "/api/integrations/test-helpers/kyc/{userAddress}/reject"
      ]
    ) {
      expect(Object.keys(document.paths[path]?.post?.responses ?? {}), path).toEqual(
        expect.arrayContaining(["413", "415"])
      )
    }
    for (const { path } of bodyless()) {
      const answer = await post(server, partner, path, { body: "hello", contentType: "text/plain" })
      expect(answer.status).toBe(415)
      expect(JSON.parse(answer.text)).toEqual({ error: "content-type must be application/json" })
    }
  })
})

describe("a POST that takes a body, sent empty with Content-Type: text/plain", () => {
  it("gets what it gets without a type: 400 naming the body, not 415", async ({ server, partner }) => {
    const path = `${BREB}/kyc/otp/send`
    const untyped = await post(server, partner, path, {})
    const typed = await post(server, partner, path, { body: "", contentType: "text/plain" })
    expect(untyped.status).toBe(400)
    expect(typed).toEqual(untyped)
    const answer = {
      ...typed,
      headers: new Headers({ "content-type": "application/json" }),
      body: JSON.parse(typed.text)
    }
    expectErrorBody(answer, 400)
  })
})
