import { Context, Effect, Option } from "effect"
import { batched } from "../base/Batched.ts"
import { makeRateLimiter } from "./RateLimiter.ts"

/** Failed authentications one client address may make at once, and how many more a second after that (one per 5 s). */
export const FAILED_AUTH_BURST = 50
const FAILED_AUTH_PER_SECOND = 0.2

/**
 * The failed-authentication budget of one client address: `burst` at once, `perSecond` more after that. A
 * Reference so a test can hold an address over budget for as long as it looks (a refill of 0.2 a second gives a
 * guess back every 5 s, sooner than a busy machine runs a test's next request).
 */
export const FailedAuthBudget = Context.Reference<{ readonly burst: number; readonly perSecond: number }>(
  "FailedAuthBudget",
  { defaultValue: () => ({ burst: FAILED_AUTH_BURST, perSecond: FAILED_AUTH_PER_SECOND }) }
)

/** Keys remembered as having authenticated (their hashes), least recently used forgotten first. */
const MAX_TRUSTED_KEYS = 10_000

/**
 * Keys from addresses over budget looked up in one statement at most; those statements run one at a time in the
 * replica, whatever the number of addresses.
 */
export const OVER_BUDGET_BATCH = 500

/** How long a key hash found unknown is answered from memory for an address over budget, and how many are kept. */
const FAILED_HASH_MS = 60_000
const MAX_FAILED_HASHES = 10_000

export type GuardedLookup<A> =
  | { readonly _tag: "Looked"; readonly key: Option.Option<A> }
  | { readonly _tag: "OverBudget"; readonly retryAfterSeconds: number }

/**
 * Limits failed authentications per client address (a token bucket per address, in-process like the per-key
 * rate limit; the address is ClientAddress's: the TCP peer's, or the forwarded client's through TRUSTED_PROXIES).
 *
 * What counts: only a lookup that found nothing. A request refused without a lookup (no Authorization header,
 * another scheme, a malformed key, a bad checksum, the other kind of key) costs nothing, so it spends nothing and
 * is always answered 401: a conformance kit run against a shared sandbox sends many of them on purpose, run after
 * run. A guess is a well-formed key with a valid checksum, and only those reach the database.
 *
 * The rule chosen for a payments API: a correct key is never refused because of other clients' failures. Behind a
 * NAT or a proxy not in TRUSTED_PROXIES many clients share an address, and after a deploy no key has been seen, so
 * an address over budget cannot mean "refuse every key". Within the budget a guess is looked up and a failure is
 * answered 401. A key not seen before spends one failure up front, given back if it is found, so concurrent
 * guesses cannot get more 401s than the budget. Over budget a key is still looked up (`lookUpOverBudget`): found,
 * it is served; not found, the answer is 429 with Retry-After, which tells the guesser no more than before. A key
 * this replica has seen authenticate is looked up without spending anything; only a failure of it (revoked since)
 * costs one.
 *
 * What the database pays for guesses over budget is bounded another way: their keys are looked up in batches, one
 * statement at a time per replica (up to `OVER_BUDGET_BATCH` keys, every key that waited while the previous one ran),
 * so a flood of guesses holds one database connection, and a correct key among them waits about one statement, not
 * behind every guess; and a key hash found unknown in the last minute is answered 429 from memory, so a client
 * repeating a wrong or revoked key costs no lookup. Neither can refuse a correct key: the wait ends in a lookup, and
 * a hash that was not active never becomes active (revocation and expiry are final, and a new key is 256 random
 * bits).
 */
export const makeFailedAuthLimit = <A>(options: {
  /** The active keys among these hashes, by hash (the lookup of keys from addresses over budget). */
  readonly lookUpMany: (keyHashes: ReadonlyArray<string>) => Effect.Effect<ReadonlyMap<string, A>>
  readonly burst?: number
  readonly perSecond?: number
}) => {
  const budgets = makeRateLimiter(options.perSecond ?? FAILED_AUTH_PER_SECOND, options.burst ?? FAILED_AUTH_BURST)
  const trusted = new Set<string>()
  const failedUntil = new Map<string, number>()
  const lookUpBatched = batched({ run: options.lookUpMany, maxBatch: OVER_BUDGET_BATCH })

  const trust = (keyHash: string) => {
    trusted.delete(keyHash)
    trusted.add(keyHash)
    if (trusted.size > MAX_TRUSTED_KEYS) trusted.delete(trusted.values().next().value!)
  }

  const noteFailed = (keyHash: string) => {
    trusted.delete(keyHash)
    failedUntil.delete(keyHash)
    failedUntil.set(keyHash, performance.now() + FAILED_HASH_MS)
    if (failedUntil.size > MAX_FAILED_HASHES) failedUntil.delete(failedUntil.keys().next().value!)
  }

  const failedRecently = (keyHash: string) => {
    const until = failedUntil.get(keyHash)
    if (until === undefined) return false
    if (until > performance.now()) return true
    failedUntil.delete(keyHash)
    return false
  }

  const noteOutcome = (keyHash: string) => (key: Option.Option<A>) =>
    Effect.sync(() => (Option.isSome(key) ? trust(keyHash) : noteFailed(keyHash)))

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
     * Looks a key up unless it is not trusted and its address is over budget (then `lookUpOverBudget`). An untrusted
     * key spends one failure up front, given back if it is found, so concurrent guesses cannot get more lookups
     * here than the budget.
     */
    guardLookup: (address: string, keyHash: string, lookup: Effect.Effect<Option.Option<A>>) =>
      Effect.suspend((): Effect.Effect<GuardedLookup<A>> => {
        const reserved = !trusted.has(keyHash)
        if (reserved) {
          const { allowed, retryAfterSeconds } = budgets.take(address)
          if (!allowed) return Effect.succeed({ _tag: "OverBudget", retryAfterSeconds })
        }
        return lookup.pipe(
          Effect.tap((key) => {
            if (Option.isSome(key) && reserved) budgets.refund(address)
            if (Option.isNone(key) && !reserved) budgets.take(address)
            return noteOutcome(keyHash)(key)
          }),
          Effect.map((key) => ({ _tag: "Looked", key }))
        )
      }),

    /**
     * The lookup of a key from an address over budget: none, without a lookup, for a hash found unknown within the
     * last minute; else in the next batch. Run it in the request's fiber, so a client that leaves also leaves the
     * batch.
     */
    lookUpOverBudget: (keyHash: string): Effect.Effect<Option.Option<A>> =>
      Effect.suspend(() =>
        failedRecently(keyHash) ? Effect.succeedNone : Effect.tap(lookUpBatched(keyHash), noteOutcome(keyHash))
      )
  }
}
