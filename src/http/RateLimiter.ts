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

  /** What is left after a take: whole requests, and the seconds until the bucket is full again. */
  const left = (bucket: Bucket) => ({
    remaining: Math.floor(bucket.tokens),
    resetSeconds: Math.ceil((burst - bucket.tokens) / perSecond)
  })

  return {
    /** The limit as the IETF RateLimit-Policy header states it: `burst` requests per the time it takes to refill. */
    policy: { quota: burst, windowSeconds: Math.max(1, Math.ceil(burst / perSecond)) },
    /** Takes one token; returns the seconds to wait when none is left, and what is left. */
    take: (key: string, now = performance.now()): {
      readonly allowed: boolean
      readonly retryAfterSeconds: number
      readonly remaining: number
      readonly resetSeconds: number
    } => {
      const bucket = refilled(key, now)
      if (bucket.tokens >= 1) {
        bucket.tokens -= 1
        return { allowed: true, retryAfterSeconds: 0, ...left(bucket) }
      }
      return { allowed: false, retryAfterSeconds: (1 - bucket.tokens) / perSecond, ...left(bucket) }
    },
    /** Gives back a token taken for something that turned out not to count. */
    refund: (key: string, now = performance.now()): void => {
      const bucket = refilled(key, now)
      bucket.tokens = Math.min(burst, bucket.tokens + 1)
    }
  }
}
