/**
 * Restricted keys (issue #35, part 1): a key issued with scopes runs only the operations they allow; anything else is
 * 403 with an ErrorBody naming the scope it needs (or that it needs a full key: opening the dashboard, whose session
 * may do anything). Full keys work as before. The scopes show in GET api-keys and survive a rotation. The contract's
 * list of what each operation needs covers every authenticated operation, and nothing else.
 */
import {
  ApiKeyList,
  ApiScope,
  IntegrationsApi,
  type IntegrationId,
  OPERATION_SCOPES
} from "@cop-integrations/contracts"
import { Effect, Option, Schema } from "effect"
import { HttpApi } from "effect/http-api"
import { describe, expect, it as plain } from "vitest"
import { ApiKeyRepo } from "../../src/auth/ApiKeyRepo.ts"
import { httpTest } from "../support/fixture.ts"
import { BREB, call, expectError, newAddress, PAYOUTS } from "../support/flows.ts"
import type { TestServer } from "../support/server.ts"

const it = httpTest()
const API = "/api/integrations"

const restrictedKey = (server: TestServer, integrationId: IntegrationId, scopes: ReadonlyArray<ApiScope>) =>
  server.run(Effect.flatMap(ApiKeyRepo, (keys) => keys.issue(integrationId, "test", null, { scopes })))

describe("restricted keys", () => {
  it("a read-only key reads, and every write is 403 naming the scope it needs", async ({ server }) => {
    const { apiKey: fullKey, integrationId } = await server.newIntegration()
    const readOnly = await restrictedKey(server, integrationId, ["payouts:read", "events:read"])
    const as = (key: string, method: "GET" | "POST", path: string, body?: unknown) =>
      call(server.baseUrl, key, method, path, body === undefined ? {} : { body })

    expect((await as(readOnly.key, "GET", PAYOUTS)).status).toBe(200)
    expect((await as(readOnly.key, "GET", `${API}/events`)).status).toBe(200)
    expect((await as(readOnly.key, "GET", `${BREB}/payout-batches`)).status).toBe(200)

    const payout = {
      userAddress: newAddress(),
      destinationCop: "250000",
      breBKey: "@maria2024",
      accountOwnerName: "Maria Perez"
    }
    const refusals = [
      [await as(readOnly.key, "POST", PAYOUTS, payout), "payouts:write"],
      [
        await as(readOnly.key, "POST", `${API}/webhook-endpoints`, { url: "http://127.0.0.1:9/hooks" }),
        "webhooks:manage"
      ],
      [
        await as(readOnly.key, "POST", `${BREB}/kyc/otp/send`, { email: "a@example.com", userAddress: newAddress() }),
        "kyc:write"
      ],
      [await as(readOnly.key, "GET", `${API}/api-keys`), "api_keys:read"],
      [await as(readOnly.key, "GET", `${API}/reports/statement`, undefined), "reports:read"]
    ] as const
    for (const [wire, scope] of refusals) {
      const error = expectError(wire, 403)
      expect(error).toBe(
        `this key is restricted (scopes: payouts:read, events:read): this operation needs the scope ${scope}`
      )
    }
    // The dashboard's session may do anything the integration may: only a full key opens it.
    expect(expectError(await as(readOnly.key, "POST", `${API}/dashboard/sessions`, {}), 403)).toMatch(
      /needs a full key$/
    )
    // A refused request made nothing.
    const listed = await as(fullKey, "GET", PAYOUTS)
    expect((listed.json as { items: Array<unknown> }).items).toEqual([])

    // The full key still does everything, and sees the restricted key's scopes.
    const keys = await as(fullKey, "GET", `${API}/api-keys`)
    expect(keys.status, keys.text).toBe(200)
    const records = Schema.decodeUnknownSync(ApiKeyList)(keys.json).items
    expect(records.find((record) => record.keyId === readOnly.id)?.scopes).toEqual(["payouts:read", "events:read"])
    expect(records.find((record) => record.current)?.scopes).toBeNull()
  })

  it("a rotated restricted key keeps its scopes", async ({ server }) => {
    const { integrationId } = await server.newIntegration()
    const old = await restrictedKey(server, integrationId, ["reports:read"])
    const rotated = await server.run(Effect.flatMap(ApiKeyRepo, (keys) => keys.rotate(old.id, 0)))
    const fresh = Option.getOrThrow(rotated).issued
    expect(
      (await call(server.baseUrl, fresh.key, "GET", `${API}/reports/statement`, { query: { date: "2026-11-29" } }))
        .status
    ).toBe(200)
    expectError(await call(server.baseUrl, fresh.key, "GET", PAYOUTS), 403)
  })
})

plain("every authenticated operation of the contract says what it needs of a key, and the list names no other", () => {
  const authenticated: Array<string> = []
  HttpApi.reflect(IntegrationsApi, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, group, middleware }) => {
      if ([...middleware].some((entry) => entry.key === "Authentication")) {
        authenticated.push(`${group.identifier}.${endpoint.identifier}`)
      }
    }
  })
  expect(Object.keys(OPERATION_SCOPES).sort()).toEqual(authenticated.sort())
  for (const needed of Object.values(OPERATION_SCOPES)) {
    expect(needed === "any" || needed === "full" || Schema.is(ApiScope)(needed), needed).toBe(true)
  }
})
