/**
 * GET /api-keys (issue #31, the dashboard's API keys view): the calling integration's keys, every state (active,
 * revoked, expired), oldest first, with `current: true` on the key making the request; never the key or its hash, and
 * never another integration's keys.
 */
import { createHash } from "node:crypto"
import { ApiKeyList, type IntegrationId } from "@cop-integrations/contracts"
import { Effect, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { describe, expect } from "vitest"
import { ApiKeyRepo } from "../../src/auth/ApiKeyRepo.ts"
import { httpTest } from "../support/fixture.ts"
import { call, expectError } from "../support/flows.ts"
import type { TestServer } from "../support/server.ts"
import { withClient } from "../support/server.ts"

const KEYS = "/api/integrations/api-keys"

const it = httpTest()

const list = async (server: TestServer, apiKey: string) => {
  const wire = await call(server.baseUrl, apiKey, "GET", KEYS)
  expect(wire.status, wire.text).toBe(200)
  return { page: Schema.decodeUnknownSync(ApiKeyList)(wire.json), text: wire.text, json: wire.json }
}

const issue = (server: TestServer, integrationId: IntegrationId, expiresAt: Date | null = null) =>
  server.run(Effect.flatMap(ApiKeyRepo, (keys) => keys.issue(integrationId, "test", expiresAt)))

describe("GET /api-keys", () => {
  it("lists every key of the caller's integration, in every state, the calling one current", async ({ server }) => {
    const { apiKey, integrationId } = await server.newIntegration()
    const second = await issue(server, integrationId)
    const revoked = await issue(server, integrationId)
    await server.run(Effect.flatMap(ApiKeyRepo, (keys) => keys.revoke(revoked.id)))
    const expired = await issue(server, integrationId, new Date(Date.now() - 60_000))
    const expiring = await issue(server, integrationId, new Date("2100-01-01T00:00:00.000Z"))
    // Another integration's keys are never listed.
    const other = await server.newIntegration()

    const { json, page, text } = await list(server, apiKey)
    expect(page.integrationId).toBe(integrationId)
    expect(page.items).toHaveLength(5)
    const [first, ...rest] = page.items
    expect(first).toMatchObject({ kind: "test", last4: apiKey.slice(-4), status: "active", current: true })
    expect(first!.lastUsedAt, "the request itself used it").not.toBeNull()
    expect(rest.map((key) => [key.keyId, key.status, key.current, key.last4])).toEqual([
      [second.id, "active", false, second.key.slice(-4)],
      [revoked.id, "revoked", false, revoked.key.slice(-4)],
      [expired.id, "expired", false, expired.key.slice(-4)],
      [expiring.id, "active", false, expiring.key.slice(-4)]
    ])
    expect(rest.map((key) => key.lastUsedAt)).toEqual([null, null, null, null])
    expect(page.items[2]!.revokedAt).not.toBeNull()
    expect(page.items.map((key) => key.revokedAt === null)).toEqual([true, true, false, true, true])
    expect(page.items[3]!.expiresAt).toBe(expired.expiresAt!.toISOString())
    expect(page.items[4]!.expiresAt).toBe("2100-01-01T00:00:00.000Z")
    const createdAt = page.items.map((key) => Date.parse(key.createdAt))
    expect(createdAt).toEqual([...createdAt].sort((a, b) => a - b))

    // What identifies a key, never the key or its hash.
    for (const key of [apiKey, second.key, revoked.key, expired.key, expiring.key]) {
      expect(text).not.toContain(key)
      expect(text).not.toContain(createHash("sha256").update(key).digest("hex"))
    }
    for (const item of (json as { items: Array<Record<string, unknown>> }).items) {
      expect(Object.keys(item).sort()).toEqual(
        [
          "allowedIps",
          "createdAt",
          "current",
          "expiresAt",
          "keyId",
          "kind",
          "last4",
          "lastUsedAt",
          "revokedAt",
          "scopes",
          "status"
        ]
      )
    }
    const theirs = await list(server, other.apiKey)
    expect(theirs.page.items.map((key) => key.last4)).toEqual([other.apiKey.slice(-4)])
    expect(theirs.page.items.map((key) => key.keyId)).not.toContain(second.id)
  })

  it("marks as current the key making the request", async ({ server }) => {
    const { apiKey, integrationId } = await server.newIntegration()
    const second = await issue(server, integrationId)
    const viaSecond = await list(server, second.key)
    expect(viaSecond.page.items.map((key) => key.current)).toEqual([false, true])
    expect((await list(server, apiKey)).page.items.map((key) => key.current)).toEqual([true, false])
  })

  it("a rotated key shows its expiry, and is expired once past it", async ({ server }) => {
    const { apiKey, integrationId } = await server.newIntegration()
    const [old] = (await list(server, apiKey)).page.items
    const rotated = await server.run(Effect.flatMap(ApiKeyRepo, (keys) => keys.rotate(old!.keyId, 3_600_000)))
    expect(rotated._tag).toBe("Some")
    const after = (await list(server, apiKey)).page.items
    expect(after.map((key) => key.status)).toEqual(["active", "active"])
    expect(Date.parse(after[0]!.expiresAt!)).toBeGreaterThan(Date.now())
    expect(after[0]!.current).toBe(true)
    // Past the overlap (moved there in the database): expired, and listed as such by the new key.
    await server.run(
      Effect.flatMap(
        SqlClient.SqlClient,
        (sql) => sql`UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE id = ${old!.keyId}`
      )
    )
    const newKey = rotated._tag === "Some" ? rotated.value.issued.key : ""
    const listed = (await list(server, newKey)).page.items
    expect(listed.map((key) => [key.status, key.current])).toEqual([["expired", false], ["active", true]])
    expect(integrationId).toBe((await list(server, newKey)).page.integrationId)
  })

  it("needs a key: without one it is 401", async ({ server }) => {
    const wire = await fetch(`${server.baseUrl}${KEYS}`)
    expect(wire.status).toBe(401)
    expectError(
      { status: wire.status, headers: wire.headers, text: "", json: await wire.json() },
      401
    )
  })

  it("works through the typed client", async ({ server, partner }) => {
    const page = await withClient(server.baseUrl, partner.apiKey, (client) => client.apiKeys.listApiKeys())
    expect(page.integrationId).toBe(partner.integrationId)
    expect(page.items.filter((key) => key.current)).toHaveLength(1)
  })
})
