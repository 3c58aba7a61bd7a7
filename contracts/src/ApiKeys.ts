import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { Authentication } from "./Auth.ts"
import { groupErrors } from "./Breb.ts"
import { IntegrationId, KeyId } from "./Ids.ts"
import { IsoTimestamp } from "./Primitives.ts"
import { ApiScope } from "./Scopes.ts"

export const ApiKeyStatus = Schema.Literals(["active", "revoked", "expired"]).annotate({
  identifier: "ApiKeyStatus",
  description:
    "`active`: it authenticates; `revoked`: revoked by the operator, never again; `expired`: past its `expiresAt` (a key replaced by a rotation expires after the overlap)"
})
export type ApiKeyStatus = typeof ApiKeyStatus.Type

export const ApiKeyRecord = Schema.Struct({
  keyId: KeyId.annotate({ description: "`key_…`, the key's id (not the key)" }),
  kind: Schema.Literals(["test", "live"]).annotate({
    description: "`test` (`cop_test_pk_…`, mock deployments) or `live` (`cop_live_pk_…`, live deployments)"
  }),
  last4: Schema.String.annotate({ description: "The key's last 4 characters: all that is kept of it besides a hash" }),
  createdAt: IsoTimestamp,
  lastUsedAt: Schema.NullOr(IsoTimestamp).annotate({
    description:
      "When it last authenticated a request, to within a minute (recorded at most once a minute); null if never"
  }),
  expiresAt: Schema.NullOr(IsoTimestamp).annotate({
    description: "When it stops authenticating (set by a rotation for the old key, or when issued); null: no expiry"
  }),
  revokedAt: Schema.NullOr(IsoTimestamp).annotate({ description: "When it was revoked; null if it was not" }),
  status: ApiKeyStatus,
  current: Schema.Boolean.annotate({ description: "True for the key that authenticated this request" }),
  scopes: Schema.NullOr(Schema.Array(ApiScope)).annotate({
    description:
      "A restricted key's scopes (a request outside them is 403 naming the scope it needs); null for a full key, which may do everything"
  }),
  allowedIps: Schema.NullOr(Schema.Array(Schema.String)).annotate({
    description:
      "The addresses the key is accepted from, as CIDRs (`203.0.113.0/24`, `2001:db8::/48`; one address is its /32 or /128): a request from any other is 403. Set by the operator (`keys allow-ips`). null: any address"
  })
}).annotate({
  identifier: "ApiKeyRecord",
  description: "One API key of the integration: what identifies it, never the key itself or its hash",
  examples: [{
    keyId: KeyId.make("key_7Hq2LmP9xVb4Rt1Kd8Wc3n"),
    kind: "test",
    last4: "x9Qe",
    createdAt: "2026-11-20T14:02:11.481Z",
    lastUsedAt: "2026-11-22T03:19:00.512Z",
    expiresAt: null,
    revokedAt: null,
    status: "active",
    current: true,
    scopes: null,
    allowedIps: ["203.0.113.0/24"]
  }]
})
export type ApiKeyRecord = typeof ApiKeyRecord.Type

export const ApiKeyList = Schema.Struct({
  integrationId: IntegrationId,
  items: Schema.Array(ApiKeyRecord)
}).annotate({
  identifier: "ApiKeyList",
  description: "Every key of the calling integration, oldest first (`createdAt`, then `keyId`)"
})
export type ApiKeyList = typeof ApiKeyList.Type

/** The calling integration's API keys, read-only: keys are issued, rotated and revoked by the operator. */
export class ApiKeysGroup extends HttpApiGroup.make("apiKeys")
  .add(
    HttpApiEndpoint.get("listApiKeys", "/api-keys", {
      success: ApiKeyList,
      error: groupErrors
    })
      .annotate(OpenApi.Summary, "List this integration's API keys")
      .annotate(
        OpenApi.Description,
        "Every API key of the calling integration, active or not, oldest first: its id, kind, last 4 characters, when it was created, last used (to within a minute), expires and was revoked, its `status`, and `current: true` on the key making this request. Never the key or its hash. Read-only: keys are issued, rotated and revoked by the operator (`npm run keys`)."
      )
  )
  .middleware(Authentication)
  .prefix("/api/integrations")
  .annotate(OpenApi.Title, "API keys")
  .annotate(OpenApi.Description, "The calling integration's API keys, without the keys themselves (read-only).")
{}
