/**
 * The API-key cache: one lookup per key and period; a key revoked in the database stops working once the period
 * ends (the stated revocation bound), unknown keys are never remembered (a new key works at once).
 */
import { IntegrationId, KeyId } from "@cop-integrations/contracts"
import { it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { describe, expect } from "vitest"
import type { ApiKeyRow } from "../../src/auth/ApiKeyRepo.ts"
import { cachedKeyLookup } from "../../src/auth/KeyCache.ts"

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

/** A key table in memory: `active` decides what the "database" answers; `lookups` counts the queries. */
const fakeTable = (answer: ApiKeyRow = row) => {
  const state = { active: new Set<string>(), lookups: 0 }
  const lookup = (hash: string) =>
    Effect.sync(() => {
      state.lookups++
      return state.active.has(hash) ? Option.some(answer) : Option.none<ApiKeyRow>()
    })
  return { state, lookup }
}

describe("cachedKeyLookup", () => {
  it.effect("looks an active key up once per period, and a revocation applies when the period ends", () =>
    Effect.gen(function*() {
      const { lookup, state } = fakeTable()
      state.active.add("h1")
      let now = 1_000_000
      const find = cachedKeyLookup(5000, lookup, Effect.sync(() => now))
      for (let i = 0; i < 10; i++) expect(Option.isSome(yield* find("h1"))).toBe(true)
      expect(state.lookups).toBe(1)

      state.active.delete("h1") // revoked
      now += 4999
      expect(Option.isSome(yield* find("h1"))).toBe(true) // still inside the bound
      now += 1
      expect(Option.isNone(yield* find("h1"))).toBe(true)
      expect(state.lookups).toBe(2)
    }))

  it.effect("remembers an expiring key no longer than its expiry (a rotated key stops at the end of its overlap)", () =>
    Effect.gen(function*() {
      let now = 1_000_000
      const { lookup, state } = fakeTable({ ...row, expires_at: new Date(now + 1000) })
      state.active.add("h3")
      const find = cachedKeyLookup(5000, lookup, Effect.sync(() => now))
      expect(Option.isSome(yield* find("h3"))).toBe(true)
      state.active.delete("h3") // the database no longer answers it once expired
      now += 999
      expect(Option.isSome(yield* find("h3"))).toBe(true)
      now += 1
      expect(Option.isNone(yield* find("h3"))).toBe(true)
      expect(state.lookups).toBe(2)
    }))

  it.effect("never remembers an unknown key: issued later, it works at once", () =>
    Effect.gen(function*() {
      const { lookup, state } = fakeTable()
      const find = cachedKeyLookup(5000, lookup)
      expect(Option.isNone(yield* find("h2"))).toBe(true)
      state.active.add("h2")
      expect(Option.isSome(yield* find("h2"))).toBe(true)
      expect(state.lookups).toBe(2)
    }))

  it.effect("0 turns the cache off", () =>
    Effect.gen(function*() {
      const { lookup, state } = fakeTable()
      state.active.add("h3")
      const find = cachedKeyLookup(0, lookup)
      yield* find("h3")
      yield* find("h3")
      expect(state.lookups).toBe(2)
    }))
})
