interface Bucket {
  tokens: number
  updatedAt: number
}

/**
 * Token bucket per key: `perSecond` sustained, `burst` at once. In-process: each replica limits on its own.
 * At most `maxKeys` buckets are kept; the least recently used is forgotten first (a forgotten bucket starts full).
 */
export const makeRateLimiter = (perSecond: number, burst: number, maxKeys = 100_000) => {
  const buckets = new Map<string, Bucket>()

  const refilled = (key: string, now: number): Bucket => {
    const bucket = buckets.get(key) ?? { tokens: burst, updatedAt: now }
    bucket.tokens = Math.min(burst, bucket.tokens + ((now - bucket.updatedAt) / 1000) * perSecond)
    bucket.updatedAt = now
    buckets.delete(key)
    buckets.set(key, bucket)
    if (buckets.size > maxKeys) buckets.delete(buckets.keys().next().value!)
    return bucket
  }

  return {
    /** Takes one token; returns the seconds to wait when none is left. */
    take: (key: string, now = performance.now()): { readonly allowed: boolean; readonly retryAfterSeconds: number } => {
      const bucket = refilled(key, now)
      if (bucket.tokens >= 1) {
        bucket.tokens -= 1
        return { allowed: true, retryAfterSeconds: 0 }
      }
      return { allowed: false, retryAfterSeconds: (1 - bucket.tokens) / perSecond }
    },
    /** Gives back a token taken for something that turned out not to count. */
    refund: (key: string, now = performance.now()): void => {
      const bucket = refilled(key, now)
      bucket.tokens = Math.min(burst, bucket.tokens + 1)
    }
  }
}
