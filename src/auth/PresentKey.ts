import type { ApiKeyRecord, KeyId } from "@cop-integrations/contracts"
import { type ApiKeyRow, keyState } from "./ApiKeyRepo.ts"

/** A key as the integration sees it at `at`: what identifies it, never the key or its hash. */
export const presentApiKey = (row: ApiKeyRow, at: Date, currentKeyId: KeyId): ApiKeyRecord => ({
  keyId: row.id,
  kind: row.kind,
  last4: row.last4,
  createdAt: row.created_at.toISOString(),
  lastUsedAt: row.last_used_at?.toISOString() ?? null,
  expiresAt: row.expires_at?.toISOString() ?? null,
  revokedAt: row.revoked_at?.toISOString() ?? null,
  status: keyState(row, at),
  current: row.id === currentKeyId,
  scopes: row.scopes,
  allowedIps: row.allowed_ips
})
