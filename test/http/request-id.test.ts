/**
 * X-Request-Id: a client's own id is kept (echoed, and written in every log line of its request) only when it cannot
 * be a secret; a key, a webhook secret or a token pasted there is replaced by a generated id, so it reaches neither
 * the logs nor the response.
 */
import { randomBytes } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { isSafeRequestId } from "../../src/http/RequestId.ts"
import { BREB, call } from "../support/http.ts"
import { startTestServer, type TestServer } from "../support/server.ts"

let server: TestServer
let apiKey: string
let liveKey: string
beforeAll(async () => {
  server = await startTestServer({ captureLogs: true })
  ;({ apiKey } = await server.newIntegration())
  ;({ apiKey: liveKey } = await server.newIntegration("live"))
})
afterAll(() => server?.close())

const GENERATED = /^req_[0-9A-Za-z]{17}$/

const withRequestId = (id: string, path = `${BREB}/quote`) =>
  call(server, path, { apiKey, headers: { "x-request-id": id } })

/** The access line of the request answered with `requestId`, once it is written. */
const accessLineOf = (requestId: string) =>
  expect.poll(
    () =>
      server.logs.map((line) => JSON.parse(line) as { message: unknown; annotations: Record<string, unknown> })
        .find((entry) => entry.message === "request" && entry.annotations["requestId"] === requestId)?.annotations,
    {
      timeout: 5000
    }
  )

describe("a secret pasted into X-Request-Id", () => {
  it("never reaches the logs or the response: a generated id is used instead", async () => {
    const endpoint = await call(server, "/api/integrations/webhook-endpoints", {
      apiKey,
      body: { url: "http://127.0.0.1:9/hooks" }
    })
    expect(endpoint.status, endpoint.text).toBe(201)
    const webhookSecret: string = endpoint.body.secret
    expect(webhookSecret).toMatch(/^whsec_/)

    const secrets = [
      apiKey,
      liveKey,
      webhookSecret,
      // The same secret in base64url, so only its prefix tells it apart.
      `whsec_${randomBytes(32).toString("base64url")}`,
      // A key's prefix alone, or a key body alone.
      "cop_live_pk_staging",
      apiKey.slice("cop_test_pk_".length),
      // A hex private key (64 digits) and another service's token.
      randomBytes(32).toString("hex"),
      "ghp_R8xK2mQ9vL4nT7wZ1pY6sD3fH5jB0cE8gA2k"
    ]
    for (const secret of secrets) {
      const from = server.logs.length
      for (const path of [`${BREB}/quote`, "/nope"]) {
        const answer = await withRequestId(secret, path)
        const used = answer.headers.get("x-request-id")!
        expect(used, secret).toMatch(GENERATED)
        await accessLineOf(used).toMatchObject({ requestId: used })
      }
      expect(server.logs.slice(from).filter((line) => line.includes(secret)), secret).toEqual([])
    }
  })
})

describe("an ordinary X-Request-Id", () => {
  it("is kept: echoed in the response and written in the access line", async () => {
    const ordinary = [
      "abc-123_XYZ.9",
      "0f8fad5b-d9cb-469f-a165-70867728950e", // UUID
      "0f8fad5bd9cb469fa16570867728950e", // UUID without dashes
      "01ARZ3NDEKTSV4RRFFQ69G5FAV", // ULID
      "4bf92f3577b34da6a3ce929d0e0e4736", // W3C trace id
      "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", // traceparent
      "req_0I7ACkISwzOYAIr01", // one of ours, sent back
      "order-2026-11-25.retry.2"
    ]
    for (const id of ordinary) {
      const answer = await withRequestId(id)
      expect(answer.status).toBe(200)
      expect(answer.headers.get("x-request-id"), id).toBe(id)
      await accessLineOf(id).toMatchObject({ requestId: id, status: 200 })
    }
  })
})

describe("the rule's bounds", () => {
  it("keeps 32 characters between separators, not 33; a mixed stretch of 19, not 20", () => {
    expect(isSafeRequestId("a".repeat(32))).toBe(true)
    expect(isSafeRequestId("a".repeat(33))).toBe(false)
    expect(isSafeRequestId(`${"a".repeat(32)}-${"b".repeat(31)}`)).toBe(true)
    expect(isSafeRequestId("Ab1".repeat(6) + "A")).toBe(true)
    expect(isSafeRequestId("Ab1".repeat(6) + "Ab")).toBe(false)
    expect(isSafeRequestId("AB1".repeat(10))).toBe(true)
    expect(isSafeRequestId("x".repeat(65))).toBe(false)
    expect(isSafeRequestId("")).toBe(false)
    expect(isSafeRequestId("WHSEC_abc")).toBe(false)
  })
})
