/** Token bucket per API key: `perSecond` sustained, `burst` at once. In-process: each replica limits on its own. */
export const makeRateLimiter = (perSecond: number, burst: number) => {
  const buckets = new Map<string, { tokens: number; updatedAt: number }>()
  return {
    /** Takes one token; returns the seconds to wait when none is left. */
    take: (key: string, now = performance.now()): { readonly allowed: boolean; readonly retryAfterSeconds: number } => {
      const bucket = buckets.get(key) ?? { tokens: burst, updatedAt: now }
      bucket.tokens = Math.min(burst, bucket.tokens + ((now - bucket.updatedAt) / 1000) * perSecond)
      bucket.updatedAt = now
      buckets.set(key, bucket)
      if (bucket.tokens >= 1) {
        bucket.tokens -= 1
        return { allowed: true, retryAfterSeconds: 0 }
      }
      return { allowed: false, retryAfterSeconds: (1 - bucket.tokens) / perSecond }
    }
  }
}
