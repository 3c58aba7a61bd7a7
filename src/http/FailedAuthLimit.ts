import { Effect, Option } from "effect"
import { makeRateLimiter } from "./RateLimiter.ts"

/** Failed authentications one client address may make at once, and how many more a second after that (one per 5 s). */
export const FAILED_AUTH_BURST = 50
const FAILED_AUTH_PER_SECOND = 0.2

/** Keys remembered as having authenticated (their hashes), least recently used forgotten first. */
const MAX_TRUSTED_KEYS = 10_000

export type GuardedLookup<A> =
  | { readonly _tag: "Looked"; readonly key: Option.Option<A> }
  | { readonly _tag: "Refused"; readonly retryAfterSeconds: number }

/**
 * Limits failed authentications per client address (a token bucket per address, in-process like the per-key
 * rate limit), so guessing keys costs the database at most the budget: after it, attempts get 429 with
 * Retry-After and no lookup.
 *
 * What counts: only a lookup that found nothing. A request refused without a lookup (no Authorization header,
 * another scheme, a malformed key, a bad checksum, the other kind of key) costs nothing, so it spends nothing and
 * is always answered 401: a conformance kit run against a shared sandbox sends many of them on purpose, run after
 * run. A guess is a well-formed key with a valid checksum, and only those reach the database.
 *
 * The behaviour chosen for a payments API: only failures spend the budget, and a key this replica has seen
 * authenticate is always looked up, so a partner's traffic is never blocked because something else behind
 * the same address (a NAT, a proxy, a stale deployment of theirs) keeps failing; it is limited only by its
 * per-key rate limit. A key not seen before is refused while its address is over budget: without the very
 * lookup the budget exists to avoid, it cannot be told from a guess. Addresses are the TCP peer's: behind a
 * proxy (or through the web handler, which has none) all clients share one budget, and trusted keys still pass.
 */
export const makeFailedAuthLimit = (burst = FAILED_AUTH_BURST, perSecond = FAILED_AUTH_PER_SECOND) => {
  const budgets = makeRateLimiter(perSecond, burst)
  const trusted = new Set<string>()

  const trust = (keyHash: string) => {
    trusted.delete(keyHash)
    trusted.add(keyHash)
    if (trusted.size > MAX_TRUSTED_KEYS) trusted.delete(trusted.values().next().value!)
  }

  return {
    /**
     * Whether the key has authenticated before (as `guardLookup` would find it, spending nothing), noting that it was
     * used again; for a key authenticated without a lookup (remembered as active), with what `guardLookup` does then.
     */
    passTrusted: (keyHash: string): boolean => {
      if (!trusted.has(keyHash)) return false
      trust(keyHash)
      return true
    },

    /**
     * Looks a key up unless its address is over budget. An untrusted key spends one failure up front, given
     * back if it is found, so concurrent guesses cannot get more lookups than the budget.
     */
    guardLookup: <A>(address: string, keyHash: string, lookup: Effect.Effect<Option.Option<A>>) =>
      Effect.suspend((): Effect.Effect<GuardedLookup<A>> => {
        const reserved = !trusted.has(keyHash)
        if (reserved) {
          const { allowed, retryAfterSeconds } = budgets.take(address)
          if (!allowed) return Effect.succeed({ _tag: "Refused", retryAfterSeconds })
        }
        return Effect.map(lookup, (key) => {
          if (Option.isSome(key)) {
            if (reserved) budgets.refund(address)
            trust(keyHash)
          } else {
            trusted.delete(keyHash)
            if (!reserved) budgets.take(address)
          }
          return { _tag: "Looked", key }
        })
      })
  }
}
