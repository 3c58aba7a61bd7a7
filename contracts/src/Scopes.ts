import { Schema } from "effect"

/**
 * What a restricted API key may do (issue #35): each a resource and `read` or `write`. A full key (every key issued
 * before scopes existed, and every key issued without `--scopes`) may do everything; a restricted key only what its
 * scopes allow, a request outside them answered 403 naming the scope it needs.
 */
export const ApiScope = Schema.Literals([
  "payouts:read",
  "payouts:write",
  "kyc:read",
  "kyc:write",
  "swaps:read",
  "swaps:write",
  "events:read",
  "webhooks:manage",
  "reports:read",
  "request_logs:read",
  "api_keys:read",
  "audit_log:read",
  "sandbox:write"
]).annotate({
  identifier: "ApiScope",
  description:
    "What a restricted key may do: `payouts:read` (quotes, payouts and batches), `payouts:write` (create, confirm, cancel; previews), `kyc:read`, `kyc:write` (OTP), `swaps:read`, `swaps:write`, `events:read`, `webhooks:manage` (endpoints, redelivery), `reports:read`, `request_logs:read`, `api_keys:read`, `audit_log:read`, `sandbox:write` (the test helpers)"
})
export type ApiScope = typeof ApiScope.Type

/**
 * What an operation needs of a key: a scope; `any` (every key: the dashboard's own session); `full` (a full key only:
 * opening the dashboard, whose session may do anything the integration may).
 */
export type RequiredScope = ApiScope | "any" | "full"

/** Every authenticated operation (`<group>.<operation>`) and what it needs of the key; a test holds it complete. */
export const OPERATION_SCOPES: Readonly<Record<string, RequiredScope>> = {
  "breb.quote": "payouts:read",
  "breb.sendOtp": "kyc:write",
  "breb.verifyOtp": "kyc:write",
  "breb.getKycCustomer": "kyc:read",
  "breb.previewDestination": "payouts:write",
  "breb.createPayout": "payouts:write",
  "breb.getPayout": "payouts:read",
  "breb.confirmPayout": "payouts:write",
  "breb.cancelPayout": "payouts:write",
  "breb.listPayouts": "payouts:read",
  "payoutBatches.createPayoutBatch": "payouts:write",
  "payoutBatches.confirmPayoutBatch": "payouts:write",
  "payoutBatches.listPayoutBatches": "payouts:read",
  "payoutBatches.getPayoutBatch": "payouts:read",
  "swaps.prepareSwap": "swaps:write",
  "swaps.getSwap": "swaps:read",
  "swaps.confirmSwap": "swaps:write",
  "swaps.listSwaps": "swaps:read",
  "events.createWebhookEndpoint": "webhooks:manage",
  "events.listWebhookEndpoints": "webhooks:manage",
  "events.getWebhookEndpoint": "webhooks:manage",
  "events.updateWebhookEndpoint": "webhooks:manage",
  "events.deleteWebhookEndpoint": "webhooks:manage",
  "events.rotateWebhookSecret": "webhooks:manage",
  "events.pingWebhookEndpoint": "webhooks:manage",
  "events.listEvents": "events:read",
  "events.getEvent": "events:read",
  "events.redeliverEvent": "webhooks:manage",
  "events.replayWebhookEvents": "webhooks:manage",
  "events.getWebhookReplay": "webhooks:manage",
  "apiKeys.listApiKeys": "api_keys:read",
  "dashboard.createDashboardSignInLink": "full",
  "dashboard.getDashboardSession": "any",
  "dashboard.endDashboardSession": "any",
  "requestLogs.listRequestLogs": "request_logs:read",
  "requestLogs.getRequestLog": "request_logs:read",
  "auditLog.listAuditLog": "audit_log:read",
  "testHelpers.advancePayout": "sandbox:write",
  "testHelpers.expirePayout": "sandbox:write",
  "testHelpers.delayPayout": "sandbox:write",
  "testHelpers.expireSwap": "sandbox:write",
  "testHelpers.triggerEvent": "sandbox:write",
  "testHelpers.rejectKyc": "sandbox:write",
  "reports.payoutReport": "reports:read",
  "reports.swapReport": "reports:read",
  "reports.statement": "reports:read"
}

/**
 * Why a key with `scopes` (null: a full key) may not run `operation`, or undefined when it may. An operation missing
 * from OPERATION_SCOPES needs a full key (a new operation is never open to restricted keys by omission).
 */
export const scopeRefusal = (operation: string, scopes: ReadonlyArray<ApiScope> | null): string | undefined => {
  if (scopes === null) return undefined
  const needed = OPERATION_SCOPES[operation] ?? "full"
  if (needed === "any" || scopes.includes(needed as ApiScope)) return undefined
  const has = scopes.length === 0 ? "none" : scopes.join(", ")
  return needed === "full"
    ? `this key is restricted (scopes: ${has}): this operation needs a full key`
    : `this key is restricted (scopes: ${has}): this operation needs the scope ${needed}`
}
