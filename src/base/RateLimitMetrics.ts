import { Context, Metric } from "effect"

/** What a 429 was for: a key's request rate, failed authentications from an address, destination verifications, OTP sends. */
export type RateLimitReason = "api_key" | "failed_auth" | "destination_verifications" | "otp_sends"

const REASONS: ReadonlyArray<RateLimitReason> = ["api_key", "failed_auth", "destination_verifications", "otp_sends"]

/** Effect's default metric registry (what the admin listener exports). */
const registry = Context.empty()

const counters = new Map(REASONS.map((reason) => {
  const counter = Metric.counter("cop_rate_limit_refusals_total", {
    description: "Requests refused 429 by a rate limit, by limit.",
    attributes: { reason }
  })
  // Present at 0 from the start, so a rate over it is defined before the first refusal.
  counter.updateUnsafe(0, registry)
  return [reason, counter]
}))

export const countRateLimited = (reason: RateLimitReason): void => counters.get(reason)?.updateUnsafe(1, registry)
