/**
 * IP allowlists per key (issue #35, part 1): a key with an allowlist is accepted only from its CIDRs, the client's
 * address taken through TRUSTED_PROXIES; from anywhere else 403 ErrorBody naming the rule and the address it saw,
 * never the addresses allowed, before the key's rate limit is spent. A key without one works from anywhere. An
 * allowlist set on a key in use applies within the key cache's time; a rotation keeps it; GET api-keys shows it.
 */
import { ApiKeyList, type IntegrationId } from "@cop-integrations/contracts"
import { Effect, Option, Schema } from "effect"
import { describe, expect } from "vitest"
import { ApiKeyRepo } from "../../src/auth/ApiKeyRepo.ts"
import { openLink, SESSION, sessionCookieOf, signInLink, withCookie } from "../support/dashboard.ts"
import { httpTest } from "../support/fixture.ts"
import { call, expectError, PAYOUTS } from "../support/flows.ts"
import type { TestServer } from "../support/server.ts"

// The test's requests come from loopback, the proxy every partner's request passes: the forwarded address counts.
const it = httpTest({ env: { TRUSTED_PROXIES: "127.0.0.0/8, ::1", API_KEY_CACHE_MS: "0" } })
const API = "/api/integrations"

const from = (client: string) => ({ headers: { "x-forwarded-for": client } })

const keyAllowedFrom = (server: TestServer, integrationId: IntegrationId, allowedIps: ReadonlyArray<string>) =>
  server.run(Effect.flatMap(ApiKeyRepo, (keys) => keys.issue(integrationId, "test", null, { allowedIps })))

describe("IP allowlist per key", () => {
  it("accepts the key only from its CIDRs; elsewhere 403 naming the rule, never the list", async ({ server }) => {
    const { integrationId } = await server.newIntegration()
    const key = await keyAllowedFrom(server, integrationId, ["203.0.113.0/24", "2001:db8::/48"])

    for (const inside of ["203.0.113.7", "203.0.113.250", "2001:db8::42", "[2001:db8:0:1::9]:4711"]) {
      const answer = await call(server.baseUrl, key.key, "GET", PAYOUTS, from(inside))
      expect(answer.status, `${inside}: ${answer.text}`).toBe(200)
    }
    for (const outside of ["198.51.100.7", "203.0.114.1", "2001:db9::1"]) {
      const answer = await call(server.baseUrl, key.key, "GET", PAYOUTS, from(outside))
      const error = expectError(answer, 403)
      expect(error).toBe(
        `this API key is accepted only from the addresses its integration registered (IP allowlist), and this request came from ${
          outside.replace(/^\[|\]:.*$/g, "")
        }`
      )
      expect(answer.text).not.toContain("203.0.113")
      expect(answer.text).not.toContain("2001:db8:")
      // refused before the key's rate limit: nothing about it is stated
      expect(answer.headers.get("ratelimit")).toBeNull()
    }
    // a forwarded chain is walked from the right: the client is the first hop the proxies did not add
    const spoofed = await call(server.baseUrl, key.key, "GET", PAYOUTS, from("203.0.113.7, 198.51.100.7"))
    expectError(spoofed, 403)
  })

  it("a key without an allowlist works from anywhere", async ({ server }) => {
    const { apiKey } = await server.newIntegration()
    for (const client of ["198.51.100.7", "2001:db9::1"]) {
      expect((await call(server.baseUrl, apiKey, "GET", PAYOUTS, from(client))).status).toBe(200)
    }
  })

  it("an allowlist set on a key in use applies to its next request, and a rotation keeps it", async ({ server }) => {
    const { apiKey, integrationId } = await server.newIntegration()
    expect((await call(server.baseUrl, apiKey, "GET", PAYOUTS, from("198.51.100.7"))).status).toBe(200)
    const keyId = await server.run(
      Effect.flatMap(
        ApiKeyRepo,
        (keys) => Effect.map(keys.newestActiveOf(integrationId), (key) => Option.getOrThrow(key).id)
      )
    )
    await server.run(Effect.flatMap(ApiKeyRepo, (keys) => keys.setAllowedIps(keyId, ["198.51.100.0/24"])))
    expect((await call(server.baseUrl, apiKey, "GET", PAYOUTS, from("198.51.100.7"))).status).toBe(200)
    expectError(await call(server.baseUrl, apiKey, "GET", PAYOUTS, from("203.0.113.7")), 403)

    const rotated = await server.run(Effect.flatMap(ApiKeyRepo, (keys) => keys.rotate(keyId, 0)))
    const newKey = Option.getOrThrow(rotated).issued.key
    expectError(await call(server.baseUrl, newKey, "GET", PAYOUTS, from("203.0.113.7")), 403)
    const listed = await call(server.baseUrl, newKey, "GET", `${API}/api-keys`, from("198.51.100.9"))
    expect(listed.status, listed.text).toBe(200)
    const records = Schema.decodeUnknownSync(ApiKeyList)(listed.json).items
    expect(records.map((record) => record.allowedIps)).toEqual([["198.51.100.0/24"], ["198.51.100.0/24"]])

    // `any` again: the key works from anywhere
    await server.run(
      Effect.flatMap(ApiKeyRepo, (keys) => keys.setAllowedIps(Option.getOrThrow(rotated).issued.id, null))
    )
    expect((await call(server.baseUrl, newKey, "GET", PAYOUTS, from("203.0.113.7"))).status).toBe(200)
  })

  it("a dashboard session of an allowlisted key is held to the list too", async ({ server }) => {
    const { integrationId } = await server.newIntegration()
    const key = await keyAllowedFrom(server, integrationId, ["203.0.113.0/24"])
    const link = await signInLink(server, key.key, { "x-forwarded-for": "203.0.113.7" })
    const opened = await openLink(server, link.url)
    expect(opened.status, opened.text).toBe(303)
    const cookie = sessionCookieOf(opened)!
    const inside = await withCookie(server, cookie, SESSION, { headers: { "x-forwarded-for": "203.0.113.9" } })
    expect(inside.status, inside.text).toBe(200)
    const outside = await withCookie(server, cookie, SESSION, { headers: { "x-forwarded-for": "198.51.100.7" } })
    expect(outside.status, outside.text).toBe(403)
    expect(outside.json.error).toBe(
      "this API key is accepted only from the addresses its integration registered (IP allowlist), and this request came from 198.51.100.7"
    )
  })
})
