import type { HttpServerResponse } from "effect/http"
import type { ResponseHints } from "../base/ResponseHints.ts"

/**
 * The `Retry-After` of a 503 that sets none of its own: an outside system (the payout provider, the chain node, the
 * swap router, the e-mail API) did not answer. The call already spent its whole timeout on its tries, so a partner
 * should not come back at once; a few seconds lets a brief outage pass without keeping a user waiting.
 */
export const OUTSIDE_RETRY_AFTER_SECONDS = 5

/** The Retry-After to add to `response`: the handler's hint, else the outside-system default for a bare 503. */
export const retryAfterFor = (
  response: HttpServerResponse.HttpServerResponse,
  hints: typeof ResponseHints.Service
): number | undefined =>
  hints.retryAfterSeconds ??
    (response.status === 503 && response.headers["retry-after"] === undefined ? OUTSIDE_RETRY_AFTER_SECONDS : undefined)
