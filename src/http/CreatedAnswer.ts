import { HttpServerResponse } from "effect/http"

/**
 * A create's answer (a payout's, a batch's): the stored JSON as is, serialised once for the response, the replay and
 * the event alike, so a replay under the same Idempotency-Key is byte-for-byte the first response.
 */
export const answerCreated = (outcome: {
  readonly status: number
  readonly bodyJson: string
  readonly replayed: boolean
}) =>
  HttpServerResponse.text(outcome.bodyJson, {
    status: outcome.status,
    contentType: "application/json",
    headers: outcome.replayed ? { "idempotent-replayed": "true" } : {}
  })
