/**
 * Authentication's fast path for a key the replica remembers as active: admitted without a lookup or a single
 * flight, yet still bound by the revocation period (API_KEY_CACHE_MS, here on the TestClock) and the per-key rate
 * limit; keys not yet remembered still share one lookup per burst.
 */
import { Authentication, IntegrationId, KeyId } from "@cop-integrations/contracts"
import { it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Layer, Option } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import { TestClock } from "effect/testing"
import { describe, expect } from "vitest"
import { generateApiKey, hashApiKey } from "../../src/auth/ApiKey.ts"
import { ApiKeyRepo, type ApiKeyRow } from "../../src/auth/ApiKeyRepo.ts"
import { Deployment } from "../../src/auth/Deployment.ts"
import { AppConfig } from "../../src/config/Config.ts"
import { DashboardSessions } from "../../src/dashboard/DashboardSessions.ts"
import { AuthenticationLive } from "../../src/http/Authentication.ts"

const row: ApiKeyRow = {
  id: KeyId.make("key_1"),
  integration_id: IntegrationId.make("int_1"),
  integration_name: "acme",
  kind: "test",
  last4: "abcd",
  created_at: new Date(0),
  revoked_at: null,
  expires_at: null,
  last_used_at: null,
  replaced_by: null,
  scopes: null,
  allowed_ips: null
}

interface Table {
  readonly active: Set<string>
  lookups: number
  /** When set, lookups wait for it. */
  gate: Deferred.Deferred<void> | undefined
}

const harness = (table: Table, settings: { readonly rateLimitBurst?: number } = {}) => {
  const repo = {
    findActiveByHash: (hash: string) =>
      Effect.gen(function*() {
        table.lookups++
        if (table.gate !== undefined) yield* Deferred.await(table.gate)
        return table.active.has(hash) ? Option.some(row) : Option.none<ApiKeyRow>()
      }),
    findActiveByHashes: (hashes: ReadonlyArray<string>) =>
      Effect.sync(() => {
        table.lookups += hashes.length
        return new Map(hashes.filter((hash) => table.active.has(hash)).map((hash) => [hash, row]))
      })
  }
  const config = {
    apiKeyCacheMs: 5000,
    rateLimitPerSecond: 0.001,
    rateLimitBurst: settings.rateLimitBurst ?? 1000,
    trustedProxies: []
  }
  return AuthenticationLive.pipe(
    Layer.provide(Layer.mergeAll(
      // Authentication reads only these settings and these repository methods.
      Layer.succeed(AppConfig, config as unknown as typeof AppConfig.Service),
      Layer.succeed(Deployment, { mode: "mock", keyKind: "test" }),
      Layer.succeed(ApiKeyRepo, repo as unknown as typeof ApiKeyRepo.Service),
      // No request here has a session cookie.
      Layer.succeed(DashboardSessions, {} as unknown as typeof DashboardSessions.Service)
    ))
  )
}

type Bearer = (
  handler: Effect.Effect<HttpServerResponse.HttpServerResponse>,
  options: { readonly endpoint: { readonly identifier: string }; readonly group: { readonly identifier: string } }
) => Effect.Effect<
  HttpServerResponse.HttpServerResponse,
  { readonly error: string },
  HttpServerRequest.HttpServerRequest
>

const LIST_PAYOUTS = { endpoint: { identifier: "listPayouts" }, group: { identifier: "breb" } }

/** One request with `key` through the bearer middleware: its status, or the failure's text. */
const authenticate = (key: string) =>
  Effect.gen(function*() {
    // Our middleware reads the request, and of the platform's options only which operation it guards (for scopes).
    const bearer = (yield* Authentication).bearer as unknown as Bearer
    const request = HttpServerRequest.fromWeb(
      new Request("http://localhost/x", { headers: { authorization: `Bearer ${key}` } })
    )
    const exit = yield* Effect.exit(
      bearer(Effect.succeed(HttpServerResponse.empty({ status: 200 })), LIST_PAYOUTS).pipe(
        Effect.provideService(HttpServerRequest.HttpServerRequest, request)
      )
    )
    if (Exit.isSuccess(exit)) return exit.value.status
    const failure = exit.cause.reasons[0]
    return failure?._tag === "Fail" ? failure.error.error : "defect"
  })

const newTable = (): Table => ({ active: new Set(), lookups: 0, gate: undefined })

describe("authentication of a remembered key", () => {
  it.effect("admits it without a lookup until API_KEY_CACHE_MS ends, then a revocation applies", () => {
    const table = newTable()
    const key = generateApiKey("test")
    table.active.add(hashApiKey(key))
    return Effect.gen(function*() {
      for (let i = 0; i < 10; i++) expect(yield* authenticate(key)).toBe(200)
      expect(table.lookups).toBe(1)
      table.active.clear() // revoked
      yield* TestClock.adjust(4999)
      expect(yield* authenticate(key)).toBe(200)
      yield* TestClock.adjust(1)
      expect(yield* authenticate(key)).toBe("unknown or revoked API key")
      expect(table.lookups).toBe(2)
    }).pipe(Effect.provide(harness(table)))
  })

  it.effect("still spends the key's rate limit", () => {
    const table = newTable()
    const key = generateApiKey("test")
    table.active.add(hashApiKey(key))
    return Effect.gen(function*() {
      for (let i = 0; i < 3; i++) expect(yield* authenticate(key)).toBe(200)
      expect(yield* authenticate(key)).toBe("rate limit exceeded for this API key")
      expect(table.lookups).toBe(1)
    }).pipe(Effect.provide(harness(table, { rateLimitBurst: 3 })))
  })

  it.effect("shares one lookup among concurrent requests with a key not yet remembered", () => {
    const table = newTable()
    const key = generateApiKey("test")
    table.active.add(hashApiKey(key))
    return Effect.gen(function*() {
      const gate = yield* Deferred.make<void>()
      table.gate = gate
      const fibers = yield* Effect.forEach(
        Array.from({ length: 5 }),
        () => Effect.forkChild(authenticate(key), { startImmediately: true })
      )
      yield* Effect.yieldNow
      expect(table.lookups).toBe(1)
      yield* Deferred.succeed(gate, undefined)
      for (const fiber of fibers) expect(yield* Fiber.join(fiber)).toBe(200)
      expect(yield* authenticate(key)).toBe(200)
      expect(table.lookups).toBe(1)
    }).pipe(Effect.provide(harness(table)))
  })

  it.effect("checks a key that is not remembered as before: malformed and unknown keys, no lookup for the first", () => {
    const table = newTable()
    const key = generateApiKey("test")
    const flipped = key.slice(0, -1) + (key.endsWith("A") ? "B" : "A")
    return Effect.gen(function*() {
      expect(yield* authenticate(flipped)).toBe("invalid API key: not a cop_test_pk_… or cop_live_pk_… key")
      expect(yield* authenticate(generateApiKey("live"))).toBe(
        "this is a mock deployment: it accepts only test keys (cop_test_pk_…), not live keys"
      )
      expect(table.lookups).toBe(0)
      expect(yield* authenticate(key)).toBe("unknown or revoked API key")
      expect(table.lookups).toBe(1)
    }).pipe(Effect.provide(harness(table)))
  })
})
