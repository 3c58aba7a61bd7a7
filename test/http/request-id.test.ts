/**
 * X-Request-Id: a client's own id is kept (echoed, and written in every log line of its request) only when it cannot
 * be a secret; a key, a webhook secret or a token pasted there is replaced by a generated id, so it reaches neither
 * the logs nor the response.
 */
import { randomBytes } from "node:crypto"
import { describe, expect } from "vitest"
import { isSafeRequestId } from "../../src/http/RequestId.ts"
import { httpTest } from "../support/fixture.ts"
import type { Partner } from "../support/flows.ts"
import { BREB, call } from "../support/http.ts"
import type { TestServer } from "../support/server.ts"

const it = httpTest({ captureLogs: true })

const GENERATED = /^req_[0-9A-Za-z]{17}$/

/** Secrets of other services in shapes a client may paste into X-Request-Id (fake values, real shapes). */
const VENDOR_SECRETS = [
  "4bf92f3577b34da6a3ce929d0e0e4736", // 32 hex digits: a token, or a W3C trace id
  "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", // a traceparent holds one
  "0f8fad5bd9cb469fa16570867728950e", // a UUID without its dashes
  `sk_live_${"4f".repeat(16)}`,
  "sk_test_abc123def456",
  "rk_live_0123456789abcdef",
  "pk_test_abcdefghijklmnop",
  "AKIAIOSFODNN7EXAMPLE",
  "ASIAY34FZKBOKMUTVV7A",
  "ghp_0123456789abcdef",
  "gho_abc",
  "ghs_16c7e42f292c6912",
  "ghu_abcdefghijkl",
  "github_pat_11ABCDEFG0123456789_abcdef",
  "xoxb-123456789012-1234567890123-abcdefghijklmnopqrstuvwx",
  "xoxp-1-2-3",
  "AIzaSyDaGmWKa4JsXZ-HjGw7ISLn_3namBGewQe",
  "eyJhbGciOiJub25lIn0.eyJzdWIiOiIxIn0.sig",
  "-----BEGIN-PRIVATE-KEY-----",
  "Bearer_abc123",
  "bearer.token"
]

const withRequestId = (server: TestServer, partner: Partner, id: string, path = `${BREB}/quote`) =>
  call(server, path, { apiKey: partner.apiKey, headers: { "x-request-id": id } })

/** The access line of the request answered with `requestId`, once it is written. */
const accessLineOf = (server: TestServer, requestId: string) =>
  expect.poll(
    () =>
      server.logs.map((line) => JSON.parse(line) as { message: unknown; annotations: Record<string, unknown> })
        .find((entry) => entry.message === "request" && entry.annotations["requestId"] === requestId)?.annotations,
    {
      timeout: 5000
    }
  )

describe("a secret pasted into X-Request-Id", () => {
  it("never reaches the logs or the response: a generated id is used instead", async ({ server, partner }) => {
    const { apiKey: liveKey } = await server.newIntegration("live")
    const endpoint = await call(server, "/api/integrations/webhook-endpoints", {
      apiKey: partner.apiKey,
      body: { url: "http://127.0.0.1:9/hooks" }
    })
    expect(endpoint.status, endpoint.text).toBe(201)
    const webhookSecret: string = endpoint.body.secret
    expect(webhookSecret).toMatch(/^whsec_/)

    const secrets = [
      partner.apiKey,
      liveKey,
      webhookSecret,
      // The same secret in base64url, so only its prefix tells it apart.
      `whsec_${randomBytes(32).toString("base64url")}`,
      // A key's prefix alone, or a key body alone.
      "cop_live_pk_staging",
      partner.apiKey.slice("cop_test_pk_".length),
      // A hex private key (64 digits) and another service's token.
      randomBytes(32).toString("hex"),
      "ghp_R8xK2mQ9vL4nT7wZ1pY6sD3fH5jB0cE8gA2k",
      // Shapes the rule used to keep: a 32-hex token, a Stripe key with a hex body, an AWS access key id, and
      // other vendors' prefixes with bodies too short or too plain for the length and mixing rules.
      ...VENDOR_SECRETS
    ]
    for (const secret of secrets) {
      const from = server.logs.length
      for (const path of [`${BREB}/quote`, "/nope"]) {
        const answer = await withRequestId(server, partner, secret, path)
        const used = answer.headers.get("x-request-id")!
        expect(used, secret).toMatch(GENERATED)
        await accessLineOf(server, used).toMatchObject({ requestId: used })
      }
      expect(server.logs.slice(from).filter((line) => line.includes(secret)), secret).toEqual([])
    }
  })
})

describe("an ordinary X-Request-Id", () => {
  it("is kept: echoed in the response and written in the access line", async ({ server, partner }) => {
    const ordinary = [
      "abc-123_XYZ.9",
      "0f8fad5b-d9cb-469f-a165-70867728950e", // UUID
      "0F8FAD5B-D9CB-469F-A165-70867728950E", // UUID in upper case
      "01ARZ3NDEKTSV4RRFFQ69G5FAV", // ULID
      "507f1f77bcf86cd799439011", // 24 hex digits (a MongoDB ObjectId)
      "req_0I7ACkISwzOYAIr01", // one of ours, sent back
      "order-2026-11-25.retry.2",
      "retry",
      "deadbeef",
      "task_live_3", // not a vendor prefix: only `sk_`, `rk_`, `pk_` before live/test are
      "asia-pacific-7"
    ]
    for (const id of ordinary) {
      const answer = await withRequestId(server, partner, id)
      expect(answer.status).toBe(200)
      expect(answer.headers.get("x-request-id"), id).toBe(id)
      await accessLineOf(server, id).toMatchObject({ requestId: id, status: 200 })
    }
  })
})

describe("the rule's bounds", () => {
  it("keeps 32 characters between separators, not 33; a mixed stretch of 19, not 20", () => {
    expect(isSafeRequestId("g".repeat(32))).toBe(true)
    expect(isSafeRequestId("g".repeat(33))).toBe(false)
    expect(isSafeRequestId(`${"g".repeat(32)}-${"h".repeat(31)}`)).toBe(true)
    expect(isSafeRequestId("Ab1".repeat(6) + "A")).toBe(true)
    expect(isSafeRequestId("Ab1".repeat(6) + "Ab")).toBe(false)
    expect(isSafeRequestId("AB1".repeat(10))).toBe(true)
    expect(isSafeRequestId("x".repeat(65))).toBe(false)
    expect(isSafeRequestId("")).toBe(false)
    expect(isSafeRequestId("WHSEC_abc")).toBe(false)
  })

  it("keeps a run of 31 hex digits, not 32, wherever it is; a UUID's dashes break its 32 into runs of 12 at most", () => {
    expect(isSafeRequestId("f".repeat(31))).toBe(true)
    expect(isSafeRequestId("f".repeat(32))).toBe(false)
    expect(isSafeRequestId(`order-${"0".repeat(32)}`)).toBe(false)
    expect(isSafeRequestId(`zz${"a1".repeat(16)}`)).toBe(false)
    expect(isSafeRequestId("0f8fad5b-d9cb-469f-a165-70867728950e")).toBe(true)
  })

  it("refuses every vendor secret shape listed", () => {
    for (const secret of VENDOR_SECRETS) expect(isSafeRequestId(secret), secret).toBe(false)
  })
})
