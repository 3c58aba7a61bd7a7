import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { Authentication } from "./Auth.ts"
import { groupErrors } from "./Breb.ts"
import { IntegrationId, KeyId } from "./Ids.ts"
import { ListCursor, ListLimit } from "./Payout.ts"
import { IsoTimestamp } from "./Primitives.ts"

/** Every security-relevant change the audit log records; `<what>.<what happened to it>`. */
export const AuditAction = Schema.Literals([
  "api_key.issued",
  "api_key.rotated",
  "api_key.revoked",
  "api_key.allowlist_changed",
  "webhook_endpoint.created",
  "webhook_endpoint.updated",
  "webhook_endpoint.deleted",
  "webhook_endpoint.secret_rotated",
  "webhook_endpoint.disabled",
  "dashboard.sign_in_link_created",
  "dashboard.signed_in",
  "dashboard.signed_out"
]).annotate({
  identifier: "AuditAction",
  description:
    "What changed: a key issued (with its `scopes`, `allowedIps`, `expiresAt`), rotated (`replaces`, the old key, and when it stops), revoked, or its IP allowlist changed; a webhook endpoint created, updated (the fields set), deleted, its secret rotated, or disabled by the service (`reason`); a dashboard sign-in link made, a session opened (signed in) or ended (signed out)"
})
export type AuditAction = typeof AuditAction.Type

export const AuditActor = Schema.Union([
  Schema.Struct({ type: Schema.Literal("api_key"), keyId: KeyId, last4: Schema.String }),
  Schema.Struct({ type: Schema.Literal("dashboard_session"), sessionId: Schema.String, keyId: KeyId }),
  Schema.Struct({ type: Schema.Literal("operator") }),
  Schema.Struct({ type: Schema.Literal("service") })
]).annotate({
  identifier: "AuditActor",
  description:
    "Who made the change: an API key (its id and last 4 characters), a dashboard session (its id and the key that made it), the operator (the keys CLI), or the service itself (an endpoint disabled after its receiver answered 410 Gone or failed for 3 days)"
})
export type AuditActor = typeof AuditActor.Type

/** What an entry adds to its action: ids, times, lists; never a secret (no key, no webhook secret, no token). */
export const AuditDetails = Schema.Record(
  Schema.String,
  Schema.Union([Schema.String, Schema.Array(Schema.String), Schema.Null])
).annotate({
  identifier: "AuditDetails",
  description:
    "What the change was, by action: `scopes`, `allowedIps`, `expiresAt` (api_key.issued, allowlist_changed); `replaces`, `oldKeyExpiresAt` (rotated); `url`, `events`, `status` (webhook_endpoint.created, updated: only the fields set); `reason` (disabled); `keyId`, `expiresAt` (dashboard). Never a key, a secret or a token"
})

export const AuditEntry = Schema.Struct({
  entryId: Schema.String.annotate({ description: "`aud_…`" }),
  createdAt: IsoTimestamp.annotate({ description: "When the change was made" }),
  action: AuditAction,
  actor: AuditActor,
  targetId: Schema.String.annotate({
    description: "What was changed: a key (`key_…`), a webhook endpoint (`we_…`) or a dashboard session (`ds_…`)"
  }),
  address: Schema.NullOr(Schema.String).annotate({
    description:
      "The client address of the request that made the change (through the deployment's trusted proxies); null for the operator and the service"
  }),
  requestId: Schema.NullOr(Schema.String).annotate({
    description: "The `X-Request-Id` of that request (see `GET request-logs/{requestId}`); null outside a request"
  }),
  details: AuditDetails
}).annotate({
  identifier: "AuditEntry",
  description: "One security-relevant change to the integration, as recorded in the same transaction as the change",
  examples: [{
    entryId: "aud_4Tq8ZkP2mN6vX1cR9bW3yH",
    createdAt: "2026-11-28T09:41:07.315Z",
    action: "webhook_endpoint.secret_rotated",
    actor: { type: "api_key", keyId: KeyId.make("key_7Hq2LmP9xVb4Rt1Kd8Wc3n"), last4: "x9Qe" },
    targetId: "we_5KdP8sVn2QxR7mTz4LcW1b",
    address: "203.0.113.7",
    requestId: "req_01KB2M4R7T9V1X3Z5B7D9F1H3K",
    details: {}
  }]
})
export type AuditEntry = typeof AuditEntry.Type

export const AuditLogList = Schema.Struct({
  integrationId: IntegrationId,
  items: Schema.Array(AuditEntry),
  nextCursor: Schema.NullOr(Schema.String)
}).annotate({ identifier: "AuditLogList" })
export type AuditLogList = typeof AuditLogList.Type

export const ListAuditLogParams = Schema.Struct({
  action: Schema.optionalKey(AuditAction.annotate({ description: "Only entries of this action" })),
  createdFrom: Schema.optionalKey(IsoTimestamp.annotate({ description: "Only changes made at or after this" })),
  createdTo: Schema.optionalKey(IsoTimestamp.annotate({ description: "Only changes made before this" })),
  limit: Schema.optionalKey(ListLimit),
  cursor: Schema.optionalKey(ListCursor)
})
export type ListAuditLogParams = typeof ListAuditLogParams.Type

/** The integration's security-relevant changes: who changed its keys, endpoints and dashboard access, when, from where. */
export class AuditLogGroup extends HttpApiGroup.make("auditLog")
  .add(
    HttpApiEndpoint.get("listAuditLog", "/audit-log", {
      query: ListAuditLogParams,
      success: AuditLogList,
      error: groupErrors
    })
      .annotate(OpenApi.Summary, "List this integration's audit log, newest first")
      .annotate(
        OpenApi.Description,
        "Every security-relevant change to this integration, newest first, each recorded in the same transaction as the change: keys issued, rotated, revoked or allowlisted (by the operator), webhook endpoints created, updated, deleted, their secrets rotated or disabled by the service, dashboard sign-in links made and sessions opened and ended. Each names the actor, the time, the client address and the request id; none holds a secret. Filter by `action` and the time range `createdFrom` (inclusive) to `createdTo` (exclusive); pass `nextCursor` as `cursor` for the next page (`null` on the last). Kept as long as the integration."
      )
  )
  .middleware(Authentication)
  .prefix("/api/integrations")
  .annotate(OpenApi.Title, "Audit log")
  .annotate(
    OpenApi.Description,
    "Who changed the integration's keys, webhook endpoints and dashboard access, when and from where."
  )
{}
