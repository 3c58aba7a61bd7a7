import type { EndpointId } from "@cop-integrations/contracts"
import { Effect, Option } from "effect"
import { AuditLog } from "../auth/AuditLog.ts"
import { Outbox } from "../outbox/Outbox.ts"
import { DeliveryRepo } from "./DeliveryRepo.ts"
import { presentEndpoint } from "./Present.ts"

/**
 * The service disables an endpoint (its receiver answered 410 Gone, or every delivery failed for the retry window):
 * disabled if still enabled, its pending deliveries given up, and `endpoint.disabled` recorded for the integration's
 * other endpoints, in the caller's transaction. Whether this disabled it (false: it was disabled already).
 */
export const disableEndpoint = (endpointId: EndpointId, reason: string, at: Date) =>
  Effect.gen(function*() {
    const deliveries = yield* DeliveryRepo
    const disabled = yield* deliveries.disableEndpoint(endpointId, reason, at)
    yield* deliveries.failPendingOf(endpointId, at)
    if (Option.isNone(disabled)) return false
    yield* (yield* Outbox).record({
      integrationId: disabled.value.integration_id,
      type: "endpoint.disabled",
      resourceId: disabled.value.id,
      object: presentEndpoint(disabled.value),
      at
    })
    yield* (yield* AuditLog).record({
      integrationId: disabled.value.integration_id,
      action: "webhook_endpoint.disabled",
      targetId: disabled.value.id,
      actor: { type: "service" },
      details: { reason }
    })
    yield* Effect.logWarning(`webhook endpoint disabled: ${reason}`).pipe(Effect.annotateLogs({ endpointId }))
    return true
  })
