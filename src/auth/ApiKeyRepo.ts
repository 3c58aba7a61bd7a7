import { ApiScope, IntegrationId, KeyId } from "@cop-integrations/contracts"
import { Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { newId } from "../base/ids.ts"
import { generateApiKey, hashApiKey, type KeyKind, last4 } from "./ApiKey.ts"
import { AuditLog } from "./AuditLog.ts"

const KeyKindSchema = Schema.Literals(["test", "live"])

export const ApiKeyRow = Schema.Struct({
  id: KeyId,
  integration_id: IntegrationId,
  integration_name: Schema.String,
  kind: KeyKindSchema,
  last4: Schema.String,
  created_at: Schema.Date,
  revoked_at: Schema.NullOr(Schema.Date),
  expires_at: Schema.NullOr(Schema.Date),
  last_used_at: Schema.NullOr(Schema.Date),
  replaced_by: Schema.NullOr(Schema.String),
  /** A restricted key's scopes; null: a full key. */
  scopes: Schema.NullOr(Schema.Array(ApiScope)),
  /** The CIDRs the key is accepted from; null: any address. */
  allowed_ips: Schema.NullOr(Schema.Array(Schema.String))
})
export type ApiKeyRow = typeof ApiKeyRow.Type

/** Whether a key authenticates at `at`: not revoked, not past its expiry. */
export const keyState = (key: ApiKeyRow, at: Date): "active" | "revoked" | "expired" =>
  key.revoked_at !== null ? "revoked" : key.expires_at !== null && key.expires_at <= at ? "expired" : "active"

/** What a key may do and where from: a restricted key's scopes, its CIDRs (each null: no limit). */
export interface KeyLimits {
  readonly scopes: ReadonlyArray<ApiScope> | null
  readonly allowedIps: ReadonlyArray<string> | null
}

export interface IssuedKey {
  readonly id: KeyId
  readonly key: string
  readonly expiresAt: Date | null
}

export class ApiKeyRepo extends Context.Service<ApiKeyRepo>()("ApiKeyRepo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const audit = yield* AuditLog
    const columns = sql`k.id, k.integration_id, i.name AS integration_name, k.kind, k.last4, k.created_at, k.revoked_at,
                        k.expires_at, k.last_used_at, k.replaced_by, k.scopes, k.allowed_ips`

    /**
     * The active key with this hash, noting its use: `last_used_at` is written at most once a minute per key, in
     * the same statement (a lookup that finds nothing, or a key used within the minute, writes nothing).
     */
    const findActiveByHash = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: ApiKeyRow,
      execute: (hash) =>
        sql`WITH found AS (
              SELECT ${columns} FROM api_keys k JOIN integrations i ON i.id = k.integration_id
              WHERE k.key_hash = ${hash} AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > now())
            ), used AS (
              UPDATE api_keys SET last_used_at = now()
              WHERE id IN (SELECT id FROM found) AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')
            )
            SELECT * FROM found`
    })

    /**
     * `findActiveByHash` for many hashes in one statement, keyed by hash. One array parameter, so one prepared
     * statement whatever their number.
     */
    const findActiveByHashes = SqlSchema.findAll({
      Request: Schema.Array(Schema.String),
      Result: Schema.Struct({ ...ApiKeyRow.fields, key_hash: Schema.String }),
      execute: (hashes) =>
        sql`WITH found AS (
              SELECT k.key_hash, ${columns} FROM api_keys k JOIN integrations i ON i.id = k.integration_id
              WHERE k.key_hash = ANY(${hashes}::text[]) AND k.revoked_at IS NULL
                AND (k.expires_at IS NULL OR k.expires_at > now())
            ), used AS (
              UPDATE api_keys SET last_used_at = now()
              WHERE id IN (SELECT id FROM found) AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')
            )
            SELECT * FROM found`
    })

    const list = SqlSchema.findAll({
      Request: Schema.Void,
      Result: ApiKeyRow,
      execute: () =>
        sql`SELECT ${columns} FROM api_keys k JOIN integrations i ON i.id = k.integration_id
            ORDER BY k.created_at, k.id`
    })

    const newestActiveOf = SqlSchema.findOneOption({
      Request: IntegrationId,
      Result: ApiKeyRow,
      execute: (integrationId) =>
        sql`SELECT ${columns} FROM api_keys k JOIN integrations i ON i.id = k.integration_id
            WHERE k.integration_id = ${integrationId} AND k.revoked_at IS NULL
              AND (k.expires_at IS NULL OR k.expires_at > now())
            ORDER BY k.created_at DESC, k.id DESC LIMIT 1`
    })

    const listOf = SqlSchema.findAll({
      Request: IntegrationId,
      Result: ApiKeyRow,
      execute: (integrationId) =>
        sql`SELECT ${columns} FROM api_keys k JOIN integrations i ON i.id = k.integration_id
            WHERE k.integration_id = ${integrationId}
            ORDER BY k.created_at, k.id`
    })

    const setAllowedIps = SqlSchema.findOneOption({
      Request: Schema.Struct({ id: Schema.String, allowedIps: Schema.NullOr(Schema.Array(Schema.String)) }),
      Result: Schema.Struct({ id: Schema.String, integration_id: IntegrationId }),
      execute: ({ allowedIps, id }) =>
        sql`UPDATE api_keys SET allowed_ips = ${allowedIps}::text[]
            WHERE id = ${id} AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())
            RETURNING id, integration_id`
    })

    const revoke = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: Schema.Struct({ id: Schema.String, integration_id: IntegrationId }),
      execute: (id) =>
        sql`UPDATE api_keys SET revoked_at = now() WHERE id = ${id} AND revoked_at IS NULL RETURNING id, integration_id`
    })

    const lockActive = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: Schema.Struct({
        integration_id: IntegrationId,
        kind: KeyKindSchema,
        expires_at: Schema.NullOr(Schema.Date),
        scopes: Schema.NullOr(Schema.Array(ApiScope)),
        allowed_ips: Schema.NullOr(Schema.Array(Schema.String))
      }),
      execute: (id) =>
        sql`SELECT integration_id, kind, expires_at, scopes, allowed_ips FROM api_keys
            WHERE id = ${id} AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now()) FOR UPDATE`
    })

    const expireReplaced = SqlSchema.findOne({
      Request: Schema.Struct({ id: Schema.String, replacedBy: Schema.String, overlapMs: Schema.Number }),
      Result: Schema.Struct({ expires_at: Schema.Date }),
      execute: ({ id, overlapMs, replacedBy }) =>
        sql`UPDATE api_keys SET replaced_by = ${replacedBy},
                   expires_at = LEAST(COALESCE(expires_at, 'infinity'), now() + ${overlapMs} * interval '1 millisecond')
            WHERE id = ${id} RETURNING expires_at`
    })

    const insertKey = (
      integrationId: IntegrationId,
      kind: KeyKind,
      expiresAt: Date | null,
      limits: KeyLimits
    ) =>
      Effect.gen(function*() {
        const key = generateApiKey(kind)
        const id = newId("key")
        yield* sql`INSERT INTO api_keys ${
          sql.insert({
            id,
            integration_id: integrationId,
            kind,
            key_hash: hashApiKey(key),
            last4: last4(key),
            expires_at: expiresAt
          })
        }`
        // text[] parameters, written apart from the generic insert (which would send an array as JSON).
        const { allowedIps, scopes } = limits
        if (scopes !== null || allowedIps !== null) {
          yield* sql`UPDATE api_keys SET scopes = ${scopes}::text[], allowed_ips = ${allowedIps}::text[] WHERE id = ${id}`
        }
        return { id, key, expiresAt } satisfies IssuedKey
      })

    /**
     * A new key for the integration of active key `id`; the old key keeps working for `overlapMs` more (never past
     * an earlier expiry of its own), then stops. None when `id` is not an active key.
     */
    const rotate = (id: string, overlapMs: number, expiresAt: Date | null | undefined) =>
      sql.withTransaction(Effect.gen(function*() {
        const old = yield* lockActive(id)
        if (Option.isNone(old)) return Option.none()
        const issued = yield* insertKey(
          old.value.integration_id,
          old.value.kind,
          expiresAt === undefined ? old.value.expires_at : expiresAt,
          { scopes: old.value.scopes, allowedIps: old.value.allowed_ips }
        )
        const expired = yield* expireReplaced({ id, replacedBy: issued.id, overlapMs })
        yield* audit.record({
          integrationId: old.value.integration_id,
          action: "api_key.rotated",
          targetId: issued.id,
          details: {
            replaces: id,
            oldKeyExpiresAt: expired.expires_at.toISOString(),
            expiresAt: issued.expiresAt?.toISOString() ?? null
          }
        })
        return Option.some({ issued, oldKeyExpiresAt: expired.expires_at })
      }))

    return {
      /**
       * Creates a key and returns it in full: the only time it exists outside the caller's hands. `limits`: a
       * restricted key's scopes, the addresses it is accepted from (each null, the default: none).
       */
      issue: (
        integrationId: IntegrationId,
        kind: KeyKind,
        expiresAt: Date | null = null,
        limits: Partial<KeyLimits> = {}
      ) => {
        const { allowedIps = null, scopes = null } = limits
        return Effect.tap(
          insertKey(integrationId, kind, expiresAt, { scopes, allowedIps }),
          (issued) =>
            audit.record({
              integrationId,
              action: "api_key.issued",
              targetId: issued.id,
              details: { scopes, allowedIps, expiresAt: expiresAt?.toISOString() ?? null }
            })
        ).pipe(sql.withTransaction, Effect.orDie)
      },
      /** `expiresAt` of the new key (undefined: the old key's); the new key keeps the old one's scopes and allowlist. */
      rotate: (id: string, overlapMs: number, expiresAt?: Date | null) =>
        rotate(id, overlapMs, expiresAt).pipe(Effect.orDie),
      findActiveByHash: (hash: string) => findActiveByHash(hash).pipe(Effect.orDie),
      findActiveByHashes: (hashes: ReadonlyArray<string>) =>
        findActiveByHashes(hashes).pipe(
          Effect.map((rows) => new Map(rows.map(({ key_hash, ...row }): [string, ApiKeyRow] => [key_hash, row]))),
          Effect.orDie
        ),
      list: list(undefined).pipe(Effect.orDie),
      /** The integration's newest key that authenticates now, if any (without noting a use of it). */
      newestActiveOf: (integrationId: IntegrationId) => newestActiveOf(integrationId).pipe(Effect.orDie),
      /** One integration's keys, every state, oldest first (the api_keys_integration index). */
      listOf: (integrationId: IntegrationId) => listOf(integrationId).pipe(Effect.orDie),
      revoke: (id: string) =>
        Effect.tap(
          revoke(id),
          Option.match({
            onNone: () => Effect.void,
            onSome: (key) =>
              audit.record({ integrationId: key.integration_id, action: "api_key.revoked", targetId: id })
          })
        ).pipe(sql.withTransaction, Effect.orDie),
      /** The CIDRs active key `id` is accepted from (null: any address); none when `id` is not an active key. */
      setAllowedIps: (id: string, allowedIps: ReadonlyArray<string> | null) =>
        Effect.tap(
          setAllowedIps({ id, allowedIps }),
          Option.match({
            onNone: () => Effect.void,
            onSome: (key) =>
              audit.record({
                integrationId: key.integration_id,
                action: "api_key.allowlist_changed",
                targetId: id,
                details: { allowedIps }
              })
          })
        ).pipe(sql.withTransaction, Effect.orDie)
    } as const
  })
}) {
  // Its own AuditLog: every keys CLI and test that provides the repository gets the audit log with it.
  static readonly Default = Layer.effect(this, this.make).pipe(Layer.provide(AuditLog.Default))
}
