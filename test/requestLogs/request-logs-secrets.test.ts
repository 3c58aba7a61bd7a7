/**
 * Request logs keep no secret: keys, webhook secrets and OTP codes planted in JSON bodies, headers, query strings and
 * paths (and the ones the service itself answers with) never reach a stored row, read as raw text; a Bre-B key is
 * stored only masked. The rows of every request are waited for first, so the scan is never of an empty table.
 */
import { randomBytes, randomInt } from "node:crypto"
import { describe, expect } from "vitest"
import { generateApiKey } from "../../src/auth/ApiKey.ts"
import { httpTest } from "../support/fixture.ts"
import { BREB, call, newAddress } from "../support/http.ts"
import type { TestServer } from "../support/server.ts"
import { rawRows, untilLogged } from "./support.ts"

const OTP = "739251"
const it = httpTest({ env: { MOCK_OTP_DEBUG_CODE: OTP } })

const PLANTED_KEY = generateApiKey("test")
const PLANTED_LIVE_KEY = generateApiKey("live")
const PLANTED_SECRET = `whsec_${randomBytes(32).toString("base64")}`
/** A key's body without its prefix: a 49-character base62 run. */
const PLANTED_KEY_BODY = generateApiKey("test").slice("cop_test_pk_".length)
const URL_TOKEN = `tok${randomBytes(8).toString("hex")}`
/** A secret of no known shape: only the allow-lists keep it out. */
const OPAQUE = `opq${randomBytes(10).toString("hex")}`
const BRE_B_KEY = `@zq${randomInt(1e9, 1e10)}7731`

const API = "/api/integrations"

/** Every request made, by the request id the service answered with. */
const made: Array<string> = []

const idOf = (answer: { readonly headers: Headers }) => answer.headers.get("x-request-id") ?? "no request id"

const send = async (server: TestServer, apiKey: string, path: string, options: Parameters<typeof call>[2] = {}) => {
  const answer = await call(server, path, { apiKey, ...options })
  const requestId = answer.headers.get("x-request-id")
  expect(requestId).not.toBeNull()
  made.push(requestId!)
  return answer
}

describe("request logs keep no secret", () => {
  it("planted in bodies, headers, query strings and paths, or answered by the service", async ({ server }) => {
    const { apiKey } = await server.newIntegration()
    const planted = [PLANTED_KEY, PLANTED_LIVE_KEY, PLANTED_SECRET, PLANTED_KEY_BODY, URL_TOKEN, OPAQUE, apiKey]

    // KYC: the code in the answer (mock mode) and in the verify, right and as a number (a 400 quoting it)
    const user = newAddress()
    const sent = await send(server, apiKey, `${BREB}/kyc/otp/send`, {
      body: { email: "maria.perez@example.com", userAddress: user }
    })
    expect(sent.body.debugCode).toBe(OTP)
    expect(
      (await send(server, apiKey, `${BREB}/kyc/otp/verify`, { body: { userAddress: user, code: Number(OTP) } }))
        .status
    ).toBe(400)
    expect((await send(server, apiKey, `${BREB}/kyc/otp/verify`, { body: { userAddress: user, code: OTP } })).status)
      .toBe(200)

    // a payout: the Bre-B key, secret-bearing headers, a key in an allow-listed field, a key's bare body
    const created = await send(server, apiKey, `${BREB}/payouts`, {
      body: {
        userAddress: user,
        destinationCop: "250000",
        breBKey: BRE_B_KEY,
        accountOwnerName: `Maria ${PLANTED_KEY} ${PLANTED_KEY_BODY}`
      },
      headers: {
        "idempotency-key": PLANTED_KEY,
        "x-api-key": PLANTED_KEY,
        cookie: `session=${PLANTED_LIVE_KEY}`,
        "x-custom-secret": PLANTED_SECRET,
        "x-partner-token": OPAQUE,
        "proxy-authorization": `Basic ${OPAQUE}`,
        "user-agent": `agent/1 ${PLANTED_SECRET}`
      }
    })
    expect(created.status, created.text).toBe(201)
    const payoutId: string = created.body.payoutId

    // refused bodies: secrets in unknown fields, nested, as a field name, in a field the 400 quotes
    const refused = [
      {
        userAddress: user,
        destinationCop: "250000",
        breBKey: BRE_B_KEY,
        accountOwnerName: "Maria",
        apiKey: PLANTED_KEY
      },
      { userAddress: PLANTED_KEY, destinationCop: PLANTED_SECRET, breBKey: `${BRE_B_KEY}; ${PLANTED_KEY}` },
      { meta: { deep: [{ token: PLANTED_SECRET }, { [PLANTED_LIVE_KEY]: 1 }] }, password: OPAQUE },
      { destinationCop: { value: PLANTED_KEY, more: `x; y: ${PLANTED_KEY_BODY}` } },
      // what PostgreSQL cannot store (a NUL, a lone surrogate) is still logged, and its batch written
      { note: "nul\u0000here", destinationCop: "\ud800", ["k\u0000"]: 1 }
    ]
    for (const body of refused) {
      expect((await send(server, apiKey, `${BREB}/payouts`, { body })).status).toBe(400)
    }

    // query strings: unknown parameters, a cursor and an amount the 400s quote
    expect(
      (await send(server, apiKey, `${BREB}/payouts?limit=5&api_key=${PLANTED_KEY}&secret=${PLANTED_SECRET}`)).status
    ).toBe(200)
    expect((await send(server, apiKey, `${BREB}/payouts?cursor=${PLANTED_KEY}`)).status).toBe(400)
    expect((await send(server, apiKey, `${BREB}/payouts?limit=%00`)).status).toBe(400)
    expect(
      (await send(server, apiKey, `${BREB}/payouts?token=${OPAQUE}`, { headers: { cookie: `sid=${OPAQUE}` } }))
        .status
    ).toBe(200)
    expect((await send(server, apiKey, `${BREB}/quote?destinationCop=${encodeURIComponent(PLANTED_SECRET)}`)).status)
      .toBe(400)

    // paths: a key as a payout id, plain and percent-encoded (the 404 quotes it)
    expect((await send(server, apiKey, `${BREB}/payouts/${PLANTED_KEY}`)).status).toBe(404)
    expect(
      (await send(server, apiKey, `${BREB}/payouts/${PLANTED_LIVE_KEY.replaceAll("_", "%5F")}/cancel`, {
        method: "POST"
      })).status
    ).toBe(404)

    // webhook endpoints: the secret the service answers with (created and rotated), a token in the URL
    const endpoint = await send(server, apiKey, `${API}/webhook-endpoints`, {
      body: { url: `https://hooks.example.com/services/${URL_TOKEN}?token=${PLANTED_SECRET}` }
    })
    expect(endpoint.status, endpoint.text).toBe(201)
    const rotated = await send(server, apiKey, `${API}/webhook-endpoints/${endpoint.body.endpointId}/rotate-secret`, {
      method: "POST"
    })
    expect(rotated.status, rotated.text).toBe(200)
    planted.push(endpoint.body.secret, rotated.body.secret)

    await untilLogged(server, made)
    const rows = await rawRows(server)
    expect(rows.length).toBeGreaterThanOrEqual(made.length)
    const text = rows.join("\n")
    for (const secret of planted) {
      expect(text).not.toContain(secret)
      expect(text.toLowerCase()).not.toContain(secret.toLowerCase())
      expect(text).not.toContain(JSON.stringify(secret).slice(1, -1)) // as a JSON string's contents
      expect(text).not.toContain(secret.replaceAll("_", "%5F"))
    }
    expect(text).not.toContain(OTP)
    expect(text).not.toContain(BRE_B_KEY)
    expect(text).not.toContain(BRE_B_KEY.slice(1, -4))
    expect(text).toContain(`${"*".repeat(BRE_B_KEY.length - 4)}${BRE_B_KEY.slice(-4)}`)

    // what is kept tells what happened, masked
    const rowOf = (answer: { readonly headers: Headers }) => rows.find((row) => row.includes(idOf(answer))) ?? ""
    expect(rowOf(created)).toContain(payoutId)
    expect(rowOf(created)).toContain(`${"*".repeat(BRE_B_KEY.length - 4)}${BRE_B_KEY.slice(-4)}`)
    expect(rowOf(sent)).toContain("m***@example.com")
    expect(rowOf(sent)).not.toContain("maria.perez")
    expect(rowOf(endpoint)).toContain("https://hooks.example.com/…")
  })
})
