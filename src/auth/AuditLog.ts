import type { AuditAction, AuditActor, AuditDetails, KeyId } from "@cop-integrations/contracts"
import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { newInternalId } from "../base/ids.ts"
import { RequestOrigin } from "../base/RequestOrigin.ts"
import { ResponseHints } from "../base/ResponseHints.ts"

/** What a change records besides who, when and from where. `details` never holds a secret. */
export interface AuditRecord {
  readonly integrationId: string
  readonly action: AuditAction
  readonly targetId: string
  readonly details?: typeof AuditDetails.Type
  /** Who, when the request's key or session does not say it (a sign-in, the service itself); else from the request. */
  readonly actor?: AuditActor
}

/** The request's key or dashboard session as the actor; outside a request, the operator (the keys CLI). */
const actorOfRequest = (hints: Option.Option<typeof ResponseHints.Service>): AuditActor => {
  if (Option.isNone(hints) || hints.value.key === undefined) return { type: "operator" }
  const { dashboardSessionId, key } = hints.value
  const keyId = key.id as KeyId
  return dashboardSessionId === undefined
    ? { type: "api_key", keyId, last4: key.last4 }
    : { type: "dashboard_session", sessionId: dashboardSessionId, keyId }
}

/**
 * The audit log: every security-relevant change to an integration (keys, webhook endpoints, dashboard access), with
 * its actor, time, client address and request id. `record` writes on the caller's connection, so inside the change's
 * own transaction: a change is never without its entry, nor an entry without its change (`withItsEntry` runs a change
 * and its `record` so). `AuditEntries` reads it.
 */
export class AuditLog extends Context.Service<AuditLog>()("AuditLog", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const record = (entry: AuditRecord) =>
      Effect.gen(function*() {
        const origin = yield* RequestOrigin
        const actor = entry.actor ?? actorOfRequest(yield* Effect.serviceOption(ResponseHints))
        const fromRequest = actor.type === "api_key" || actor.type === "dashboard_session"
        yield* sql`INSERT INTO audit_log ${
          sql.insert({
            id: newInternalId("aud"),
            integration_id: entry.integrationId,
            action: entry.action,
            actor: JSON.stringify(actor),
            target_id: entry.targetId,
            address: fromRequest ? origin.address() : null,
            request_id: fromRequest ? origin.requestId : null,
            details: JSON.stringify(entry.details ?? {})
          })
        }`
      }).pipe(Effect.orDie)

    /** A change and its entry in one transaction; a database failure is a defect, as every write's here. */
    const withItsEntry = <A, R>(change: Effect.Effect<A, never, R>) => change.pipe(sql.withTransaction, Effect.orDie)

    return { record, withItsEntry } as const
  })
}) {
  static readonly Default = Layer.effect(this, this.make)
}
