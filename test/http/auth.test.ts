import { createHash } from "node:crypto"
import { SqlClient } from "effect/sql"
import { Unauthorized } from "@cop-integrations/contracts"
import { Effect, Option } from "effect"
import { describe, expect } from "vitest"
import { generateApiKey } from "../../src/auth/ApiKey.ts"
import { ApiKeyRepo } from "../../src/auth/ApiKeyRepo.ts"
import { httpTest } from "../support/fixture.ts"
import { BREB, call, expectErrorBody, failureOf } from "../support/http.ts"
import { clientExit, type TestServer } from "../support/server.ts"

// revocation is checked here without the key cache; its bound (API_KEY_CACHE_MS) in test/auth/key-cache.test.ts
const it = httpTest({ env: { API_KEY_CACHE_MS: "0" } })
/**
 * The rate limit's server: a token every 1,000 s. However slowly a busy machine sends the four requests, none is
 * refilled in between (at 1 a second, four requests spread over more than a second met a refilled bucket and the
 * fourth got 200).
 */
const itLimited = httpTest({ env: { RATE_LIMIT_PER_SECOND: "0.001", RATE_LIMIT_BURST: "3" } })

const LIST = `${BREB}/payouts`

/** A request that succeeds with a good key: listing this integration's payouts. */
const listWith = (server: TestServer, authorization: string | undefined) =>
  call(server, LIST, authorization === undefined ? {} : { headers: { authorization } })

const flipLastChar = (key: string) => {
  const last = key.slice(-1)
  return `${key.slice(0, -1)}${last === "A" ? "B" : "A"}`
}

describe("authentication", () => {
  it("accepts a valid test key (and the scheme name in any case)", async ({ server, partner }) => {
    const ok = await listWith(server, `Bearer ${partner.apiKey}`)
    expect(ok.status, ok.text).toBe(200)
    // RFC 7235: the auth-scheme token is case-insensitive
    expect((await listWith(server, `bearer ${partner.apiKey}`)).status).toBe(200)
  })

  it("rejects a request without Authorization with 401 ErrorBody", async ({ server }) => {
    expectErrorBody(await listWith(server, undefined), 401)
    expectErrorBody(await listWith(server, ""), 401)
  })

  it("rejects every BRE-B endpoint without a key before validating the body", async ({ server }) => {
    const endpoints: ReadonlyArray<readonly [string, string]> = [
      ["GET", `${BREB}/quote`],
      ["POST", `${BREB}/kyc/otp/send`],
      ["POST", `${BREB}/kyc/otp/verify`],
      ["POST", `${BREB}/payouts`],
      ["GET", `${BREB}/payouts`],
      ["GET", `${BREB}/payouts/po_unknown`],
      ["POST", `${BREB}/payouts/po_unknown/confirm`]
    ]
    for (const [method, path] of endpoints) {
      const answer = await call(server, path, method === "POST" ? { method, body: {} } : { method })
      expect(`${method} ${path} ${answer.status}`).toBe(`${method} ${path} 401`)
      expectErrorBody(answer, 401)
    }
  })

  it("rejects schemes other than Bearer", async ({ server, partner }) => {
    for (
      const authorization of [
        `Basic ${Buffer.from(`${partner.apiKey}:`).toString("base64")}`,
        `Token ${partner.apiKey}`,
        partner.apiKey
      ]
    ) {
      expectErrorBody(await listWith(server, authorization), 401)
    }
  })

  it("rejects malformed keys", async ({ server, partner }) => {
    const malformed = [
      "Bearer ",
      "Bearer cop_test_pk_short",
      "Bearer sk_test_0123456789abcdefghijklmnopqrstuvwxyz",
      `Bearer ${partner.apiKey.replace("cop_test_pk_", "cop_prod_pk_")}`,
      `Bearer ${partner.apiKey}x`,
      `Bearer ${partner.apiKey.slice(0, -1)}`,
      `Bearer ${partner.apiKey} ${partner.apiKey}`
    ]
    for (const authorization of malformed) {
      expectErrorBody(await listWith(server, authorization), 401)
    }
  })

  it("rejects a key whose checksum does not match (last character flipped)", async ({ server, partner }) => {
    expectErrorBody(await listWith(server, `Bearer ${flipLastChar(partner.apiKey)}`), 401)
  })

  it("rejects a well-formed test key that was never issued", async ({ server }) => {
    const unknown = generateApiKey("test")
    expect(unknown).toMatch(/^cop_test_pk_/)
    expectErrorBody(await listWith(server, `Bearer ${unknown}`), 401)
  })

  it("rejects a live key on this mock deployment and says why", async ({ server }) => {
    const { apiKey: liveKey } = await server.newIntegration("live")
    expect(liveKey.startsWith("cop_live_pk_")).toBe(true)
    const body = expectErrorBody(await listWith(server, `Bearer ${liveKey}`), 401)
    expect(body.error).toMatch(/test/i)
    expect(body.error).toMatch(/live/i)
    expect(body.error).not.toContain(liveKey)
  })

  it("rejects a revoked key while another key of the same integration keeps working", async ({ server }) => {
    const { apiKey: doomed, integrationId } = await server.newIntegration()
    expect((await listWith(server, `Bearer ${doomed}`)).status).toBe(200)
    const revoked = await server.run(Effect.gen(function*() {
      const keys = yield* ApiKeyRepo
      const mine = (yield* keys.list).filter((k) => k.integration_id === integrationId)
      expect(mine).toHaveLength(1)
      const second = yield* keys.issue(integrationId, "test")
      const done = yield* keys.revoke(mine[0]!.id)
      return { done, second: second.key }
    }))
    expect(Option.isSome(revoked.done)).toBe(true)
    expectErrorBody(await listWith(server, `Bearer ${doomed}`), 401)
    const rotated = await listWith(server, `Bearer ${revoked.second}`)
    expect(rotated.status, rotated.text).toBe(200)
    expect(rotated.body.integrationId).toBe(integrationId)
  })

  it("gives the typed client an Unauthorized failure for a bad key", async ({ server, partner }) => {
    const exit = await clientExit(
      server.baseUrl,
      flipLastChar(partner.apiKey),
      (client) => client.breb.listPayouts({ query: {} })
    )
    expect(failureOf(exit)).toBeInstanceOf(Unauthorized)
  })

  it("answers the unauthenticated endpoints without a key", async ({ server }) => {
    for (const path of ["/healthz", "/readyz", "/openapi.json", "/docs"]) {
      const answer = await call(server, path)
      expect(`${path} ${answer.status}`).toBe(`${path} 200`)
    }
  })
})

describe("keys at rest", () => {
  it("stores only a SHA-256 hash and the last 4 characters, never the key", async ({ server }) => {
    const { apiKey: key, integrationId } = await server.newIntegration()
    const rows = await server.run(Effect.flatMap(
      SqlClient.SqlClient,
      (sql) => sql<Record<string, unknown>>`SELECT * FROM api_keys WHERE integration_id = ${integrationId}`
    ))
    expect(rows).toHaveLength(1)
    const row = rows[0]!
    const stored = Object.values(row).map((value) => (value instanceof Date ? value.toISOString() : String(value)))
    const body = key.slice("cop_test_pk_".length)
    for (const value of stored) {
      expect(value).not.toContain(key)
      // no column keeps a recognisable chunk of the secret body either
      for (let i = 0; i + 12 <= body.length; i += 6) expect(value).not.toContain(body.slice(i, i + 12))
    }
    expect(row["last4"]).toBe(key.slice(-4))
    const sha256 = createHash("sha256").update(key).digest()
    expect([sha256.toString("hex"), sha256.toString("base64"), sha256.toString("base64url")]).toContain(row["key_hash"])
  })
})

describe("rate limit", () => {
  itLimited(
    "answers the request after the burst with 429 ErrorBody and Retry-After, per key",
    async ({ server: limited, partner }) => {
      const key = partner.apiKey
      const { apiKey: otherKey } = await limited.newIntegration()
      const statuses: Array<number> = []
      let last = await call(limited, LIST, { apiKey: key })
      statuses.push(last.status)
      for (let i = 0; i < 3; i++) {
        last = await call(limited, LIST, { apiKey: key })
        statuses.push(last.status)
      }
      expect(statuses).toEqual([200, 200, 200, 429])
      expectErrorBody(last, 429)
      const retryAfter = last.headers.get("retry-after")
      expect(retryAfter).toMatch(/^\d+$/)
      expect(Number(retryAfter)).toBeGreaterThanOrEqual(1)
      // the bucket belongs to the key: another integration's key is unaffected
      expect((await call(limited, LIST, { apiKey: otherKey })).status).toBe(200)
    }
  )

  itLimited(
    "every authenticated answer states the key's limit (IETF RateLimit-Policy, RateLimit), counting down to the 429",
    async ({ server: limited }) => {
      const { apiKey } = await limited.newIntegration()
      const answers = []
      for (let i = 0; i < 4; i++) answers.push(await call(limited, LIST, { apiKey }))
      expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 429])
      // burst 3, refilled at 0.001 a second: 3 requests per 3,000 s
      for (const answer of answers) expect(answer.headers.get("ratelimit-policy")).toBe("\"api_key\";q=3;w=3000")
      const states = answers.map((answer) => /^"api_key";r=(\d+);t=(\d+)$/.exec(answer.headers.get("ratelimit") ?? ""))
      expect(states.map((state) => state?.[1])).toEqual(["2", "1", "0", "0"])
      // the 429's reset is no sooner than its Retry-After
      expect(Number(states[3]![2])).toBeGreaterThanOrEqual(Number(answers[3]!.headers.get("retry-after")))
      // an answer to no key states no limit
      expect((await call(limited, LIST, {})).headers.get("ratelimit")).toBeNull()
    }
  )
})
