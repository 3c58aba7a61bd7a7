import { existsSync, readFileSync } from "node:fs"
import { request as httpRequest } from "node:http"
import { fileURLToPath } from "node:url"
import { openApiDocument } from "@cop-integrations/contracts"
import { describe, expect } from "vitest"
import { httpTest } from "../support/fixture.ts"
import type { Partner } from "../support/flows.ts"
import {
  type Answer,
  approveKyc,
  BREB,
  type Call,
  call,
  expectErrorBody,
  newAddress,
  newTxHash,
  payoutBody
} from "../support/http.ts"
import type { TestServer } from "../support/server.ts"

const MAX_BODY_BYTES = 64 * 1024 // DESIGN §3: request body ≤ 64 KiB
const SEND_OTP = `${BREB}/kyc/otp/send`

const it = httpTest()
/** The log-hygiene describe's server, of its own: it keeps every log line, and only that describe's requests. */
const itLogged = httpTest({ captureLogs: true })

/** Every status this file ever received, to show that no input yields a 5xx. */
const statuses: Array<string> = []
const req = async (server: TestServer, path: string, options: Call = {}): Promise<Answer> => {
  const answer = await call(server, path, options)
  statuses.push(
    `${options.method ?? (options.body === undefined ? "GET" : "POST")} ${path.slice(0, 80)} → ${answer.status}`
  )
  return answer
}
const authed = (server: TestServer, partner: Partner, path: string, options: Call = {}) =>
  req(server, path, { apiKey: partner.apiKey, ...options })

/** A POST whose body is streamed (chunked, no Content-Length) in pieces of at most 4 KiB. */
const postChunked = async (
  server: TestServer,
  partner: Partner,
  path: string,
  text: string,
  headers: Record<string, string> = {}
) => {
  const bytes = new TextEncoder().encode(text)
  let offset = 0
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (offset >= bytes.length) return controller.close()
      controller.enqueue(bytes.slice(offset, offset + 4096))
      offset += 4096
    }
  })
  const init = {
    method: "POST",
    body,
    duplex: "half",
    headers: { authorization: `Bearer ${partner.apiKey}`, "content-type": "application/json", ...headers }
  }
  const response = await fetch(`${server.baseUrl}${path}`, init)
  const raw = await response.text()
  statuses.push(`POST (chunked) ${path} → ${response.status}`)
  return { status: response.status, headers: response.headers, text: raw, body: JSON.parse(raw) } as Answer
}

/** A JSON OTP-send body padded with whitespace to exactly `size` bytes. */
const otpBodyOfSize = (size: number) => {
  const json = JSON.stringify({ email: "ana@example.com", userAddress: newAddress() })
  return json + " ".repeat(size - json.length)
}

describe("routing", () => {
  it("answers an unknown route with 404 ErrorBody", async ({ server, partner }) => {
    for (const path of ["/", "/nope", "/api/integrations/breb/unknown", "/api/integrations/v1/breb/quote"]) {
      expectErrorBody(await req(server, path), 404)
    }
    expectErrorBody(await authed(server, partner, `${BREB}/payouts/po_1/refund`, { body: {} }), 404)
  })

  it("answers a wrong method on a known route with 405 ErrorBody and an Allow header", async ({ server, partner }) => {
    const cases: ReadonlyArray<readonly [string, string, ReadonlyArray<string>]> = [
      ["DELETE", `${BREB}/payouts`, ["GET", "POST"]],
      ["PUT", "/healthz", ["GET"]],
      ["GET", SEND_OTP, ["POST"]],
      ["PATCH", `${BREB}/payouts/po_1`, ["GET"]],
      ["GET", "/api/integrations/webhooks/provider", ["POST"]],
      ["POST", "/openapi.json", ["GET"]]
    ]
    for (const [method, path, allowed] of cases) {
      const answer = await authed(server, partner, path, method === "GET" ? { method } : { method, body: {} })
      expectErrorBody(answer, 405)
      const allow = (answer.headers.get("allow") ?? "").split(",").map((m) => m.trim()).filter(Boolean)
      expect(`${method} ${path}: ${[...allow].sort().join(", ")}`).toBe(
        `${method} ${path}: ${[...allowed].sort().join(", ")}`
      )
    }
  })

  it("never answers 405 for a method the route allows (malformed path encoding)", async ({ server, partner }) => {
    const answer = await authed(server, partner, `${BREB}/payouts/%E0%A4%A`)
    expect(answer.status).not.toBe(405)
    expect([400, 404]).toContain(answer.status)
    expectErrorBody(answer, answer.status)
  })
})

describe("request bodies", () => {
  it("answers malformed JSON with 400 ErrorBody", async ({ server, partner }) => {
    for (const body of ["{bad", "{\"email\":", "\"unterminated", "{\"a\":1}}"]) {
      expectErrorBody(await authed(server, partner, SEND_OTP, { body }), 400)
    }
  })

  it("answers a JSON array, null, a scalar or an empty body with 400 ErrorBody", async ({ server, partner }) => {
    for (const body of ["[]", "[{\"email\":\"ana@example.com\"}]", "null", "42", "\"text\"", ""]) {
      const answer = await authed(server, partner, SEND_OTP, { body })
      expect(`${JSON.stringify(body)} → ${answer.status}`).toBe(`${JSON.stringify(body)} → 400`)
      expectErrorBody(answer, 400)
    }
  })

  it("accepts a body of exactly 64 KiB and answers 413 ErrorBody one byte over (Content-Length)", async ({ server, partner }) => {
    const atLimit = await authed(server, partner, SEND_OTP, { body: otpBodyOfSize(MAX_BODY_BYTES) })
    expect(atLimit.status, atLimit.text).toBe(200)
    expectErrorBody(await authed(server, partner, SEND_OTP, { body: otpBodyOfSize(MAX_BODY_BYTES + 1) }), 413)
    expectErrorBody(await authed(server, partner, SEND_OTP, { body: otpBodyOfSize(4 * MAX_BODY_BYTES) }), 413)
    // also where no key is needed
    expectErrorBody(
      await req(server, "/api/integrations/webhooks/provider", { body: otpBodyOfSize(MAX_BODY_BYTES + 1) }),
      413
    )
  })

  it("answers 413 ErrorBody for a chunked body over 64 KiB (no Content-Length)", async ({ server, partner }) => {
    const atLimit = await postChunked(server, partner, SEND_OTP, otpBodyOfSize(MAX_BODY_BYTES))
    expect(atLimit.status, atLimit.text).toBe(200)
    expectErrorBody(await postChunked(server, partner, SEND_OTP, otpBodyOfSize(MAX_BODY_BYTES + 1)), 413)
    // the connection state is sane afterwards: the next request is answered normally
    expect((await req(server, "/healthz")).status).toBe(200)
  })

  it("answers a chunked upload far over the limit with 413 instead of dropping the connection", async ({ server, partner }) => {
    const url = new URL(SEND_OTP, server.baseUrl)
    const status = await new Promise<number>((resolve, reject) => {
      const outgoing = httpRequest(url, {
        method: "POST",
        headers: { authorization: `Bearer ${partner.apiKey}`, "content-type": "application/json" }
      }, (response) => {
        response.resume()
        resolve(response.statusCode ?? 0)
      })
      outgoing.on("error", reject)
      const chunk = " ".repeat(16 * 1024)
      let sent = 0
      const writeMore = () => {
        if (sent >= 8 * MAX_BODY_BYTES || outgoing.destroyed) return outgoing.end()
        sent += chunk.length
        outgoing.write(chunk, () => setImmediate(writeMore))
      }
      outgoing.write("{", writeMore)
    })
    statuses.push(`POST (raw chunked, 512 KiB) ${SEND_OTP} → ${status}`)
    expect(status).toBe(413)
  })

  it("answers a POST with Content-Type text/plain with 415 ErrorBody", async ({ server, partner }) => {
    const body = JSON.stringify({ email: "ana@example.com", userAddress: newAddress() })
    for (const contentType of ["text/plain", "application/x-www-form-urlencoded", "application/jsonx"]) {
      expectErrorBody(await authed(server, partner, SEND_OTP, { body, headers: { "content-type": contentType } }), 415)
    }
    const ok = await authed(server, partner, SEND_OTP, {
      body,
      headers: { "content-type": "application/json; charset=utf-8" }
    })
    expect(ok.status, ok.text).toBe(200)
  })
})

describe("request ids", () => {
  it("puts an x-request-id on every response, errors included", async ({ server, partner }) => {
    const answers = [
      await req(server, "/healthz"),
      await req(server, "/readyz"),
      await req(server, "/docs"),
      await req(server, "/openapi.json"),
      await req(server, "/nope"),
      await req(server, "/healthz", { method: "DELETE" }),
      await req(server, `${BREB}/quote`),
      await authed(server, partner, `${BREB}/quote`),
      await authed(server, partner, `${BREB}/quote?destinationCop=abc`),
      await authed(server, partner, SEND_OTP, { body: "{bad" }),
      await authed(server, partner, SEND_OTP, { body: "{}", headers: { "content-type": "text/plain" } }),
      await authed(server, partner, SEND_OTP, { body: otpBodyOfSize(MAX_BODY_BYTES + 1) }),
      await authed(server, partner, `${BREB}/payouts/po_missing`),
      await req(server, "/api/integrations/webhooks/provider", { body: {} })
    ]
    const ids = answers.map((answer) => answer.headers.get("x-request-id"))
    for (const id of ids) expect(id).toMatch(/^[A-Za-z0-9._-]{8,64}$/)
    expect(new Set(ids).size).toBe(ids.length)
  })

  it("echoes a sane incoming X-Request-Id and replaces an unsafe one", async ({ server }) => {
    for (const id of ["abc-123_XYZ.9", "0f8fad5b-d9cb-469f-a165-70867728950e"]) {
      expect((await req(server, "/healthz", { headers: { "x-request-id": id } })).headers.get("x-request-id")).toBe(id)
      expect((await req(server, "/nope", { headers: { "x-request-id": id } })).headers.get("x-request-id")).toBe(id)
    }
    for (const unsafe of ["has spaces", "x".repeat(300), "<script>", "a\tb", "id;drop"]) {
      const echoed = (await req(server, "/healthz", { headers: { "x-request-id": unsafe } })).headers.get(
        "x-request-id"
      )
      expect(echoed).toMatch(/^[A-Za-z0-9._-]{8,64}$/)
      expect(echoed).not.toBe(unsafe)
    }
  })
})

describe("documents and health", () => {
  it("serves /openapi.json equal to the committed contract document, version 0.1.0, no version segment", async ({ server }) => {
    const answer = await req(server, "/openapi.json")
    expect(answer.status).toBe(200)
    expect(answer.headers.get("content-type")).toMatch(/^application\/json/)
    const committed = fileURLToPath(new URL("../../contracts/openapi.json", import.meta.url))
    const expected = existsSync(committed) ? JSON.parse(readFileSync(committed, "utf8")) : openApiDocument()
    expect(answer.body).toEqual(JSON.parse(JSON.stringify(expected)))
    expect(answer.body.info.version).toBe("0.1.0")
    const paths = Object.keys(answer.body.paths)
    expect(paths.length).toBeGreaterThan(0)
    for (const path of paths) expect(path).not.toMatch(/\/v\d+(\/|$)/i)
    expect(paths).toContain("/api/integrations/breb/payouts")
  })

  it("serves /docs as HTML", async ({ server }) => {
    const answer = await req(server, "/docs")
    expect(answer.status).toBe(200)
    expect(answer.headers.get("content-type")).toMatch(/^text\/html/)
    expect(answer.text).toMatch(/<html/i)
  })

  it("serves /healthz and /readyz", async ({ server }) => {
    const health = await req(server, "/healthz")
    expect(health.status).toBe(200)
    expect(health.body).toEqual({ status: "ok", mode: "mock", version: "0.1.0" })
    const ready = await req(server, "/readyz")
    expect(ready.status).toBe(200)
    expect(ready.body).toEqual({ status: "ready" })
  })
})

describe("robustness", () => {
  it("answers odd inputs without a 5xx", async ({ server, partner }) => {
    const payoutId = "po_" + "x".repeat(40)
    const approved = newAddress()
    await approveKyc(server, partner.apiKey, approved)
    const probes: ReadonlyArray<readonly [string, Call]> = [
      [`${BREB}/payouts/${"x".repeat(5000)}`, {}],
      [`${BREB}/payouts/%00`, {}],
      [`${BREB}/payouts/..%2F..%2Fhealthz`, {}],
      [`${BREB}/payouts/${encodeURIComponent("ñandú 💸")}`, {}],
      [`${BREB}/payouts?limit=abc`, {}],
      [`${BREB}/payouts?limit=0`, {}],
      [`${BREB}/payouts?limit=501`, {}],
      [`${BREB}/payouts?limit=1.5`, {}],
      [`${BREB}/payouts?limit=1&limit=2`, {}],
      [`${BREB}/payouts?cursor=${"z".repeat(600)}`, {}],
      [`${BREB}/payouts?cursor=not-a-cursor`, {}],
      [`${BREB}/payouts?createdFrom=yesterday`, {}],
      [`${BREB}/payouts?createdFrom=2026-13-45T99:99:99Z`, {}],
      [`${BREB}/quote?destinationCop=${"9".repeat(400)}`, {}],
      [`${BREB}/quote?destinationCop=1&destinationCop=2`, {}],
      [`${BREB}/quote?fromToken=${"A".repeat(300)}`, {}],
      [SEND_OTP, { body: { email: ["a@b.co"], userAddress: { nested: true } } }],
      [SEND_OTP, { body: { email: "a@b.co", userAddress: newAddress(), extra: "x".repeat(1000) } }],
      [SEND_OTP, { body: "\uFEFF{\"email\":\"a@b.co\"}" }],
      [SEND_OTP, { body: "[".repeat(5000) + "]".repeat(5000) }],
      [SEND_OTP, { body: `{"__proto__":{"polluted":true},"email":"a@b.co","userAddress":"${newAddress()}"}` }],
      [`${BREB}/kyc/otp/verify`, { body: { userAddress: newAddress(), code: 123456 } }],
      [`${BREB}/payouts`, { body: { ...payoutBody(newAddress()), destinationCop: 250000 } }],
      [`${BREB}/payouts`, { body: { ...payoutBody(newAddress()), accountOwnerName: "x".repeat(10_000) } }],
      [`${BREB}/payouts`, { body: payoutBody(newAddress()), headers: { "idempotency-key": "k".repeat(300) } }],
      [`${BREB}/payouts`, { body: payoutBody(newAddress()), headers: { "x-mock-scenario": "x".repeat(100) } }],
      [`${BREB}/payouts/${payoutId}/confirm`, { body: { txHash: "0x123" } }],
      [`${BREB}/payouts/${payoutId}/confirm`, { body: { txHash: newTxHash() } }],
      [`${BREB}/payouts/${payoutId}/confirm`, { body: { txHash: newTxHash(), feeTxHash: null } }],
      // NUL characters cannot be stored as PostgreSQL text
      [`${BREB}/payouts/a%00b`, {}],
      [`${BREB}/payouts/%00/confirm`, { body: { txHash: newTxHash() } }],
      [SEND_OTP, { body: { email: "a\u0000b@example.com", userAddress: newAddress() } }],
      [`${BREB}/payouts`, { body: payoutBody(approved, { accountOwnerName: "Ana\u0000Gomez" }) }],
      [`${BREB}/payouts`, { body: payoutBody(approved, { breBKey: "ana\u0000@example.com" }) }],
      [`${BREB}/payouts`, { body: { ...payoutBody(approved), quoteId: "qt_\u0000" } }],
      [`${BREB}/payouts?cursor=%00`, {}]
    ]
    for (const [path, options] of probes) {
      const answer = await authed(server, partner, path, options)
      expect(answer.status, `${path.slice(0, 80)} → ${answer.text.slice(0, 200)}`).toBeLessThan(500)
      if (answer.status >= 400) expectErrorBody(answer, answer.status)
    }
    const weirdAuth = ["Bearer", "Bearer  ", `Bearer ${"a".repeat(10_000)}`, "Bearer cop_test_pk_\u00e9\u00e9"]
    for (const authorization of weirdAuth) {
      expectErrorBody(await req(server, `${BREB}/payouts`, { headers: { authorization } }), 401)
    }
  })

  // Runs last (tests in a file run in order): everything this file sent, across all its tests.
  it("never answered any request of this file with a 5xx", () => {
    expect(statuses.length).toBeGreaterThan(50)
    expect(statuses.filter((line) => /→ 5\d\d$/.test(line))).toEqual([])
  })
})

describe("log hygiene", () => {
  itLogged(
    "each access line names the authenticated integration and an ErrorBody's errorCode",
    async ({ server: logged, partner }) => {
      const { apiKey, integrationId } = partner
      const needsKyc = await call(logged, `${BREB}/payouts`, { apiKey, body: payoutBody(newAddress()) })
      expect(needsKyc.status, needsKyc.text).toBe(409)
      expect(needsKyc.body.errorCode).toBe("needs_kyc")
      const listed = await call(logged, `${BREB}/payouts`, { apiKey })
      expect(listed.status).toBe(200)
      const anonymous = await call(logged, `${BREB}/payouts`, {})
      expect(anonymous.status).toBe(401)
      const accessLine = (answer: Answer) =>
        expect.poll(
          () =>
            logged.logs.map((line) => JSON.parse(line) as { message: unknown; annotations: Record<string, unknown> })
              .find((entry) =>
                entry.message === "request" && entry.annotations["requestId"] === answer.headers.get("x-request-id")
              )
              ?.annotations,
          { timeout: 5000 }
        )

      await accessLine(needsKyc).toMatchObject({ status: 409, integrationId, errorCode: "needs_kyc" })
      await accessLine(listed).toMatchObject({ status: 200, integrationId })
      await accessLine(listed).not.toHaveProperty("errorCode")
      await accessLine(anonymous).toMatchObject({ status: 401 })
      await accessLine(anonymous).not.toHaveProperty("integrationId")
    }
  )

  itLogged(
    "logs JSON lines with request ids and never a full key, an OTP or an unmasked Bre-B key",
    async ({ server: logged }) => {
      const breBKey = "@secretalias77"
      const { apiKey: key } = await logged.newIntegration()
      const { apiKey: liveKey } = await logged.newIntegration("live")
      const userAddress = newAddress()
      const requestIds: Array<string> = []
      const step = async (path: string, options: Call, status: number) => {
        const answer = await call(logged, path, { apiKey: key, ...options })
        expect(answer.status, answer.text).toBe(status)
        requestIds.push(answer.headers.get("x-request-id")!)
        return answer
      }
      const sent = await step(SEND_OTP, { body: { email: "ana@example.com", userAddress } }, 200)
      const code: string = sent.body.debugCode
      await step(
        `${BREB}/kyc/otp/verify`,
        { body: { userAddress, code: code === "000000" ? "000001" : "000000" } },
        400
      )
      await step(`${BREB}/kyc/otp/verify`, { body: { userAddress, code } }, 200)
      const created = await step(`${BREB}/payouts`, {
        body: payoutBody(userAddress, { breBKey, accountOwnerName: "Ana Gomez" }),
        headers: { "idempotency-key": "log-hygiene-1" }
      }, 201)
      await step(
        `${BREB}/payouts`,
        { body: payoutBody(userAddress, { breBKey, accountOwnerName: "Mismatch Person" }) },
        409
      )
      await step(`${BREB}/payouts`, { body: payoutBody(userAddress, { breBKey: "not a key" }) }, 400)
      await step(`${BREB}/payouts/${created.body.payoutId}`, {}, 200)
      await step(`${BREB}/payouts/${created.body.payoutId}/confirm`, { body: { txHash: newTxHash() } }, 200)
      await step(`${BREB}/payouts`, {}, 200)
      await step(`${BREB}/payouts`, { apiKey: liveKey }, 401)
      await step(`${BREB}/payouts`, { apiKey: `${key.slice(0, -1)}${key.endsWith("A") ? "B" : "A"}` }, 401)

      // every request has been logged once its response is written
      await expect.poll(() => requestIds.filter((id) => !logged.logs.some((line) => line.includes(id))), {
        timeout: 5000
      }).toEqual([])

      const lines = [...logged.logs]
      expect(lines.length).toBeGreaterThan(0)
      const parsed = lines.map((line) => JSON.parse(line) as Record<string, any>)
      const loggedIds = new Set(parsed.map((entry) => entry["annotations"]?.["requestId"]).filter(Boolean))
      for (const id of requestIds) expect(loggedIds).toContain(id)

      const keyBody = key.slice("cop_test_pk_".length)
      for (const line of lines) {
        expect(line).not.toContain(key)
        expect(line).not.toContain(liveKey)
        expect(line).not.toContain(keyBody.slice(0, 16))
        expect(line).not.toContain(breBKey)
        expect(line).not.toContain(breBKey.slice(1))
        expect(line).not.toMatch(new RegExp(`"code"\\s*:\\s*"?${code}`))
        if (/code/i.test(line)) expect(line).not.toContain(code)
      }
    }
  )
})
