import type { DeliveryAttempt, WebhookEndpoint } from "@cop-integrations/contracts"
import type { EndpointRow } from "./EndpointRepo.ts"
import type { AttemptRow } from "./EventRepo.ts"

export const presentEndpoint = (row: EndpointRow): WebhookEndpoint => ({
  endpointId: row.id,
  url: row.url,
  events: row.events,
  status: row.status,
  signatureScheme: row.signature_scheme,
  disabledReason: row.disabled_reason,
  createdAt: row.created_at.toISOString(),
  updatedAt: row.updated_at.toISOString()
})

export const presentAttempt = (row: AttemptRow): DeliveryAttempt => ({
  endpointId: row.endpoint_id,
  attemptedAt: row.attempted_at.toISOString(),
  outcome: row.succeeded ? "succeeded" : "failed",
  responseStatus: row.response_status,
  error: row.error,
  durationMs: row.duration_ms,
  responseExcerpt: row.response_excerpt
})
