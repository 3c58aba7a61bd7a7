import { TooManyRequests } from "@cop-integrations/contracts"
import { Context, Effect, Option } from "effect"
import { countRateLimited, type RateLimitReason } from "./RateLimitMetrics.ts"

/**
 * Per-request notes from handlers to the outer middleware: headers that typed error responses cannot carry
 * (`Retry-After` on 429s), and the authenticated integration and key for the access log line and the request log.
 */
export class ResponseHints extends Context.Service<ResponseHints, {
  retryAfterSeconds: number | undefined
  integrationId: string | undefined
  key: { readonly id: string; readonly last4: string } | undefined
  /** The dashboard session the request was made with, if any. */
  dashboardSessionId: string | undefined
  /** The matched route's template (`/api/integrations/breb/payouts/:id`), for the request metrics. */
  route: string | undefined
  /** The key's rate limit, as the IETF `RateLimit-Policy` and `RateLimit` headers state it (authenticated requests). */
  rateLimit: RateLimitState | undefined
}>()("ResponseHints") {}

/** A limit (`policy`: its name, quota and window) and where the request left it (`remaining`, `resetSeconds`). */
export interface RateLimitState {
  readonly policy: { readonly name: string; readonly quota: number; readonly windowSeconds: number }
  readonly remaining: number
  readonly resetSeconds: number
}

/** The IETF RateLimit headers (draft-ietf-httpapi-ratelimit-headers) for a limit's state. */
export const rateLimitHeaders = ({ policy, remaining, resetSeconds }: RateLimitState) => ({
  "ratelimit-policy": `"${policy.name}";q=${policy.quota};w=${policy.windowSeconds}`,
  ratelimit: `"${policy.name}";r=${remaining};t=${resetSeconds}`
})

export const noteRateLimit = (state: RateLimitState) =>
  note((hints) => {
    hints.rateLimit = state
  })

/** Writes a note when the request has hints (outside a request, nothing). */
const note = (write: (hints: typeof ResponseHints.Service) => void) =>
  Effect.map(Effect.serviceOption(ResponseHints), Option.map(write))

export const setRetryAfter = (seconds: number) =>
  note((hints) => {
    hints.retryAfterSeconds = Math.max(1, Math.ceil(seconds))
  })

/** A 429 saying `error`, with Retry-After, counted by the limit that refused it. */
export const tooManyRequests = (reason: RateLimitReason, error: string, retryAfterSeconds: number) =>
  Effect.andThen(
    Effect.andThen(Effect.sync(() => countRateLimited(reason)), setRetryAfter(retryAfterSeconds)),
    Effect.fail(new TooManyRequests({ error }))
  )

export const noteIntegration = (
  integrationId: string,
  key: { readonly id: string; readonly last4: string },
  dashboardSessionId?: string
) =>
  note((hints) => {
    hints.integrationId = integrationId
    hints.key = key
    hints.dashboardSessionId = dashboardSessionId
  })
