/**
 * The audit log (issue #35, part 1): every security-relevant change to an integration is recorded with its actor,
 * time, client address and request id, and listed by `GET audit-log`, newest first, filtered by action, in pages;
 * never a secret in it; another integration's changes are not in it; a restricted key needs `audit_log:read`.
 */
import { AuditLogList, type IntegrationId } from "@cop-integrations/contracts"
import { Effect, Option, Schema } from "effect"
import { describe, expect } from "vitest"
import { ApiKeyRepo } from "../../src/auth/ApiKeyRepo.ts"
import { SESSION, signIn, withCookie } from "../support/dashboard.ts"
import { httpTest } from "../support/fixture.ts"
import { call, expectError } from "../support/flows.ts"
import type { TestServer } from "../support/server.ts"

// Requests come from loopback, a trusted proxy here: the address recorded is the forwarded client's.
const it = httpTest({ env: { TRUSTED_PROXIES: "127.0.0.0/8, ::1" } })
const API = "/api/integrations"
const AUDIT = `${API}/audit-log`

const as = (client: string, requestId: string) => ({ "x-forwarded-for": client, "x-request-id": requestId })

const auditOf = async (server: TestServer, apiKey: string, query = "") => {
  const answer = await call(server.baseUrl, apiKey, "GET", `${AUDIT}${query}`)
  expect(answer.status, answer.text).toBe(200)
  return { list: Schema.decodeUnknownSync(AuditLogList)(answer.json), text: answer.text }
}

const keysOf = (server: TestServer, run: (keys: typeof ApiKeyRepo.Service) => Effect.Effect<any>) =>
  server.run(Effect.flatMap(ApiKeyRepo, run))

const keyIdOf = (server: TestServer, integrationId: IntegrationId) =>
  keysOf(server, (keys) => Effect.map(keys.newestActiveOf(integrationId), (key) => Option.getOrThrow(key)))

describe("audit log", () => {
  it("records each change with actor, address and request id; lists them newest first; no secret", async ({ server }) => {
    const { apiKey, integrationId } = await server.newIntegration()
    const key = await keyIdOf(server, integrationId)
    const created = await call(server.baseUrl, apiKey, "POST", `${API}/webhook-endpoints`, {
      body: { url: "http://127.0.0.1:9/hooks", events: ["payout.completed"] },
      headers: as("203.0.113.7", "audit-create-1")
    })
    expect(created.status, created.text).toBe(201)
    const { endpointId, secret } = created.json as { endpointId: string; secret: string }
    const endpoint = `${API}/webhook-endpoints/${endpointId}`
    const patched = await call(server.baseUrl, apiKey, "PATCH", endpoint, {
      body: { events: ["*"] },
      headers: as("203.0.113.8", "audit-patch-1")
    })
    expect(patched.status, patched.text).toBe(200)
    const rotated = await call(server.baseUrl, apiKey, "POST", `${endpoint}/rotate-secret`, {
      headers: as("2001:db8::5", "audit-rotate-1")
    })
    expect(rotated.status, rotated.text).toBe(200)
    const newSecret = (rotated.json as { secret: string }).secret
    const deleted = await call(server.baseUrl, apiKey, "DELETE", endpoint, {
      headers: as("203.0.113.9", "audit-del-1")
    })
    expect(deleted.status, deleted.text).toBe(204)

    // the operator's changes (the keys CLI's repository calls): no address, no request
    const restricted = await keysOf(
      server,
      (keys) => keys.issue(integrationId, "test", null, { scopes: ["events:read"] })
    )
    await keysOf(server, (keys) => keys.setAllowedIps(restricted.id, ["198.51.100.0/24"]))
    await keysOf(server, (keys) => keys.revoke(restricted.id))

    const { list, text } = await auditOf(server, apiKey)
    const byApiKey = { type: "api_key", keyId: key.id, last4: key.last4 }
    expect(list.items.map(({ action, actor, address, details, requestId, targetId }) => ({
      action,
      actor,
      targetId,
      address,
      requestId,
      details
    }))).toEqual([
      {
        action: "api_key.revoked",
        actor: { type: "operator" },
        targetId: restricted.id,
        address: null,
        requestId: null,
        details: {}
      },
      {
        action: "api_key.allowlist_changed",
        actor: { type: "operator" },
        targetId: restricted.id,
        address: null,
        requestId: null,
        details: { allowedIps: ["198.51.100.0/24"] }
      },
      {
        action: "api_key.issued",
        actor: { type: "operator" },
        targetId: restricted.id,
        address: null,
        requestId: null,
        details: { scopes: ["events:read"], allowedIps: null, expiresAt: null }
      },
      {
        action: "webhook_endpoint.deleted",
        actor: byApiKey,
        targetId: endpointId,
        address: "203.0.113.9",
        requestId: "audit-del-1",
        details: {}
      },
      {
        action: "webhook_endpoint.secret_rotated",
        actor: byApiKey,
        targetId: endpointId,
        address: "2001:db8::5",
        requestId: "audit-rotate-1",
        details: {}
      },
      {
        action: "webhook_endpoint.updated",
        actor: byApiKey,
        targetId: endpointId,
        address: "203.0.113.8",
        requestId: "audit-patch-1",
        details: { events: ["*"] }
      },
      {
        action: "webhook_endpoint.created",
        actor: byApiKey,
        targetId: endpointId,
        address: "203.0.113.7",
        requestId: "audit-create-1",
        details: { url: "http://127.0.0.1:9/hooks", events: ["payout.completed"], signatureScheme: "v1" }
      },
      {
        action: "api_key.issued",
        actor: { type: "operator" },
        targetId: key.id,
        address: null,
        requestId: null,
        details: { scopes: null, allowedIps: null, expiresAt: null }
      }
    ])
    // never a secret: no key, no webhook secret
    for (const secretText of [apiKey, secret, newSecret, "whsec_", "cop_test_pk_"]) {
      expect(text).not.toContain(secretText)
    }

    // filtered by action, and walked in pages of 3
    const onlyIssued = await auditOf(server, apiKey, "?action=api_key.issued")
    expect(onlyIssued.list.items.map((item) => item.targetId)).toEqual([restricted.id, key.id])
    const paged: Array<string> = []
    for (let cursor: string | null = ""; cursor !== null;) {
      const page = await auditOf(server, apiKey, `?limit=3${cursor === "" ? "" : `&cursor=${cursor}`}`)
      paged.push(...page.list.items.map((item) => item.entryId))
      cursor = page.list.nextCursor
    }
    expect(paged).toEqual(list.items.map((item) => item.entryId))

    // a bad action is a 400 naming the field
    expect(expectError(await call(server.baseUrl, apiKey, "GET", `${AUDIT}?action=api_key.stolen`), 400)).toMatch(
      /^invalid request: action: must be one of/
    )
  })

  it("records the dashboard's sign-in link, sign-in and sign-out, by the key and by the session", async ({ server }) => {
    const { apiKey, integrationId } = await server.newIntegration()
    const key = await keyIdOf(server, integrationId)
    const { cookie, csrfToken, session } = await signIn(server, apiKey)
    const ended = await withCookie(server, cookie, SESSION, { method: "DELETE", csrfToken })
    expect(ended.status, ended.text).toBe(204)
    const { list } = await auditOf(server, apiKey, "?limit=3")
    const sessionId = session.sessionId as string
    expect(list.items.map(({ action, actor, targetId }) => ({ action, actor, targetId }))).toEqual([
      {
        action: "dashboard.signed_out",
        actor: { type: "dashboard_session", sessionId, keyId: key.id },
        targetId: sessionId
      },
      {
        action: "dashboard.signed_in",
        actor: { type: "dashboard_session", sessionId, keyId: key.id },
        targetId: sessionId
      },
      {
        action: "dashboard.sign_in_link_created",
        actor: { type: "api_key", keyId: key.id, last4: key.last4 },
        targetId: key.id
      }
    ])
    for (const item of list.items) expect(item.address).toBe("127.0.0.1")
  })

  it("an endpoint the service disables is recorded as the service's", async ({ server }) => {
    const { apiKey } = await server.newIntegration()
    const triggered = await call(server.baseUrl, apiKey, "POST", `${API}/test-helpers/events/trigger`, {
      body: { type: "endpoint.disabled" }
    })
    expect(triggered.status, triggered.text).toBe(200)
    const { list } = await auditOf(server, apiKey, "?action=webhook_endpoint.disabled")
    expect(list.items).toHaveLength(1)
    expect(list.items[0]).toMatchObject({ actor: { type: "service" }, address: null, requestId: null })
    expect(list.items[0]!.details["reason"]).toMatch(/410 Gone/)
  })

  it("another integration's changes are not in the list; a restricted key needs audit_log:read", async ({ server }) => {
    const first = await server.newIntegration()
    const second = await server.newIntegration()
    const created = await call(server.baseUrl, first.apiKey, "POST", `${API}/webhook-endpoints`, {
      body: { url: "http://127.0.0.1:9/hooks" }
    })
    expect(created.status, created.text).toBe(201)
    const theirs = await auditOf(server, second.apiKey)
    expect(theirs.list.items.map((item) => item.action)).toEqual(["api_key.issued"])
    expect(theirs.text).not.toContain((created.json as { endpointId: string }).endpointId)

    const reader = await keysOf(
      server,
      (keys) => keys.issue(first.integrationId, "test", null, { scopes: ["audit_log:read"] })
    )
    const other = await keysOf(
      server,
      (keys) => keys.issue(first.integrationId, "test", null, { scopes: ["api_keys:read"] })
    )
    expect((await call(server.baseUrl, reader.key, "GET", AUDIT)).status).toBe(200)
    expect(expectError(await call(server.baseUrl, other.key, "GET", AUDIT), 403)).toMatch(
      /needs the scope audit_log:read$/
    )
  })
})
