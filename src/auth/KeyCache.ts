import { Clock, Effect, Option } from "effect"
import type { ApiKeyRow } from "./ApiKeyRepo.ts"

/** Keys remembered at once per replica; the oldest is forgotten first. */
const MAX_ENTRIES = 10_000

/**
 * Remembers keys found active for `ttlMs`, so a partner's requests do not each look their key up. This is the
 * revocation bound: a revoked key keeps working on a replica that looked it up for at most `ttlMs` (0: no cache).
 * An expiring key is remembered no longer than its expiry, so it stops at its `expires_at` exactly.
 * Unknown keys are never remembered, so a key issued while the service runs works at once.
 */
export const cachedKeyLookup = <E, R>(
  ttlMs: number,
  lookup: (keyHash: string) => Effect.Effect<Option.Option<ApiKeyRow>, E, R>,
  currentTimeMillis: Effect.Effect<number> = Clock.currentTimeMillis
) => {
  const entries = new Map<string, { readonly row: ApiKeyRow; readonly until: number }>()
  const find = (keyHash: string): Effect.Effect<Option.Option<ApiKeyRow>, E, R> =>
    Effect.flatMap(currentTimeMillis, (now) => {
      const hit = entries.get(keyHash)
      if (hit !== undefined && hit.until > now) return Effect.succeed(Option.some(hit.row))
      entries.delete(keyHash)
      return Effect.tap(lookup(keyHash), (found) =>
        Effect.sync(() => {
          if (ttlMs <= 0 || Option.isNone(found)) return
          const oldest = entries.keys().next()
          if (entries.size >= MAX_ENTRIES && oldest.done !== true) entries.delete(oldest.value)
          const expiry = found.value.expires_at?.getTime() ?? Number.POSITIVE_INFINITY
          entries.set(keyHash, { row: found.value, until: Math.min(now + ttlMs, expiry) })
        }))
    })
  /** The key remembered as active at `now` (milliseconds, the clock `currentTimeMillis` reads), without a lookup. */
  const cached = (keyHash: string, now: number): ApiKeyRow | undefined => {
    const hit = entries.get(keyHash)
    return hit !== undefined && hit.until > now ? hit.row : undefined
  }
  return Object.assign(find, { cached })
}
