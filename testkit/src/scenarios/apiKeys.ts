/** The calling integration's API keys (R-KEYS-1): read-only, safe against any deployment. */
import { Effect } from "effect"
import { ok } from "../api.ts"
import { check } from "../check.ts"
import { show } from "../failure.ts"
import { scenario } from "../scenario.ts"

const KEYS_RULE = "GET api-keys lists the integration's keys, current: true on exactly the key of the request"

export const apiKeyScenarios = [
  scenario({
    id: "KEYS-001",
    title: "GET api-keys: the integration's keys, exactly one current (the run's key: active, its last 4), in order",
    rules: ["R-KEYS-1"],
    tags: ["api-keys", "read-only"],
    run: (kit) =>
      Effect.gen(function*() {
        const reply = yield* kit.call("listApiKeys")
        const list = yield* ok(reply, "200 with the integration's keys")
        const current = list.items.filter((key) => key.current)
        yield* check(
          current.length === 1 && current[0]!.status === "active" && current[0]!.last4 === kit.keyEndings[0],
          KEYS_RULE,
          {
            expected: `one current key, active, ending in ${kit.keyEndings[0]}`,
            actual: show(current.map((key) => [key.keyId, key.status, key.last4])),
            exchange: reply.exchange
          }
        )
        yield* check(current[0]?.lastUsedAt !== null, KEYS_RULE, {
          expected: "the current key's lastUsedAt set (it has just authenticated requests)",
          actual: show(current[0]),
          exchange: reply.exchange
        })
        const consistent = list.items.every((key) =>
          (key.status === "revoked") === (key.revokedAt !== null) &&
          (key.status !== "expired" || (key.expiresAt !== null && Date.parse(key.expiresAt) <= Date.now() + 60_000))
        )
        yield* check(consistent, KEYS_RULE, {
          expected: "revoked keys with revokedAt (and only they), expired keys with an expiresAt that has passed",
          actual: show(list.items.map((key) => [key.status, key.revokedAt, key.expiresAt])),
          exchange: reply.exchange
        })
        const created = list.items.map((key) => Date.parse(key.createdAt))
        yield* check(created.every((at, i) => i === 0 || at >= created[i - 1]!), KEYS_RULE, {
          expected: "oldest first (createdAt ascending)",
          actual: show(list.items.map((key) => key.createdAt)),
          exchange: reply.exchange
        })
      })
  })
]
