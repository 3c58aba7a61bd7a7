import { IntegrationId, KeyId } from "@cop-integrations/contracts"
import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"

/** Whether the key that made a link or session still authenticates (not revoked, not past its expiry). */
const keyActive = (sql: SqlClient.SqlClient, keyIdColumn: string) =>
  sql`EXISTS (SELECT 1 FROM api_keys k WHERE k.id = ${sql.literal(keyIdColumn)}
              AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > now()))`

const SessionOpened = Schema.Struct({
  id: Schema.String,
  integration_id: IntegrationId,
  key_id: KeyId,
  expires_at: Schema.Date
})

export const SessionRow = Schema.Struct({
  id: Schema.String,
  integration_id: IntegrationId,
  key_id: KeyId,
  /** The last 4 characters of that key, for the request log. */
  key_last4: Schema.String,
  expires_at: Schema.Date,
  ended: Schema.Boolean,
  expired: Schema.Boolean,
  key_active: Schema.Boolean,
  /** The CIDRs that key is accepted from (null: any address): its sessions are held to them too. */
  key_allowed_ips: Schema.NullOr(Schema.Array(Schema.String))
})
export type SessionRow = typeof SessionRow.Type

const NewLink = Schema.Struct({
  tokenHash: Schema.String,
  integrationId: IntegrationId,
  keyId: KeyId,
  validMs: Schema.Number
})

const LinkUse = Schema.Struct({
  tokenHash: Schema.String,
  sessionId: Schema.String,
  sessionTokenHash: Schema.String,
  sessionMs: Schema.Number
})

const SessionEnd = Schema.Struct({ sessionId: Schema.String, integrationId: IntegrationId })

const LinkState = Schema.Struct({ used: Schema.Boolean, expired: Schema.Boolean })

/**
 * The dashboard's sign-in links and sessions (migration 0025), found by the hash of their token. Times are the
 * database's: every replica agrees on when a link or a session expires.
 */
export class SessionRepo extends Context.Service<SessionRepo>()("DashboardSessionRepo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const insertLink = SqlSchema.findOne({
      Request: NewLink,
      Result: Schema.Struct({ expires_at: Schema.Date }),
      execute: ({ integrationId, keyId, tokenHash, validMs }) =>
        sql`INSERT INTO dashboard_sign_in_links (token_hash, integration_id, key_id, expires_at)
            VALUES (${tokenHash}, ${integrationId}, ${keyId}, now() + ${validMs} * interval '1 millisecond')
            RETURNING expires_at`
    })

    /**
     * Uses the link and opens its session in one statement: of two openings at once one finds the link unused (the
     * other waits for its row and then finds it used), and a link whose key stopped working opens nothing.
     */
    const consumeLink = SqlSchema.findOneOption({
      Request: LinkUse,
      Result: SessionOpened,
      execute: ({ sessionId, sessionMs, sessionTokenHash, tokenHash }) =>
        sql`WITH used AS (
              UPDATE dashboard_sign_in_links SET used_at = now(), session_id = ${sessionId}
              WHERE token_hash = ${tokenHash} AND used_at IS NULL AND expires_at > now()
                AND ${keyActive(sql, "dashboard_sign_in_links.key_id")}
              RETURNING integration_id, key_id
            )
            INSERT INTO dashboard_sessions (id, token_hash, integration_id, key_id, expires_at)
            SELECT ${sessionId}, ${sessionTokenHash}, integration_id, key_id,
                   now() + ${sessionMs} * interval '1 millisecond'
            FROM used
            RETURNING id, integration_id, key_id, expires_at`
    })

    /** Why a link did not open a session: used, expired (or its key stopped working); none when there is no such link. */
    const linkState = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: LinkState,
      execute: (tokenHash) =>
        sql`SELECT used_at IS NOT NULL AS used,
                   (expires_at <= now() OR NOT ${keyActive(sql, "dashboard_sign_in_links.key_id")}) AS expired
            FROM dashboard_sign_in_links WHERE token_hash = ${tokenHash}`
    })

    const findSession = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: SessionRow,
      execute: (tokenHash) =>
        sql`SELECT s.id, s.integration_id, s.key_id, k.last4 AS key_last4, s.expires_at, s.ended_at IS NOT NULL AS ended,
                   s.expires_at <= now() AS expired, ${keyActive(sql, "s.key_id")} AS key_active,
                   k.allowed_ips AS key_allowed_ips
            FROM dashboard_sessions s JOIN api_keys k ON k.id = s.key_id
            WHERE s.token_hash = ${tokenHash}`
    })

    /** `findSession` for many hashes in one statement (one array parameter), keyed by hash. */
    const findSessions = SqlSchema.findAll({
      Request: Schema.Array(Schema.String),
      Result: Schema.Struct({ ...SessionRow.fields, token_hash: Schema.String }),
      execute: (tokenHashes) =>
        sql`SELECT s.token_hash, s.id, s.integration_id, s.key_id, k.last4 AS key_last4, s.expires_at,
                   s.ended_at IS NOT NULL AS ended, s.expires_at <= now() AS expired,
                   ${keyActive(sql, "s.key_id")} AS key_active, k.allowed_ips AS key_allowed_ips
            FROM dashboard_sessions s JOIN api_keys k ON k.id = s.key_id
            WHERE s.token_hash = ANY(${tokenHashes}::text[])`
    })

    const endSession = SqlSchema.findOneOption({
      Request: SessionEnd,
      Result: Schema.Struct({ id: Schema.String }),
      execute: ({ integrationId, sessionId }) =>
        sql`UPDATE dashboard_sessions SET ended_at = now()
            WHERE id = ${sessionId} AND integration_id = ${integrationId} AND ended_at IS NULL
            RETURNING id`
    })

    return {
      /** Records a link; when it expires. */
      insertLink: (link: typeof NewLink.Type) =>
        Effect.map(insertLink(link), ({ expires_at }) => expires_at).pipe(Effect.orDie),
      consumeLink: (use: typeof LinkUse.Type) => consumeLink(use).pipe(Effect.orDie),
      linkState: (tokenHash: string) => linkState(tokenHash).pipe(Effect.orDie),
      findSession: (tokenHash: string) => findSession(tokenHash).pipe(Effect.orDie),
      findSessions: (tokenHashes: ReadonlyArray<string>) =>
        findSessions(tokenHashes).pipe(
          Effect.map((rows) => new Map(rows.map(({ token_hash, ...row }): [string, SessionRow] => [token_hash, row]))),
          Effect.orDie
        ),
      /** Ends an open session of this integration; none when there was none to end. */
      endSession: (end: typeof SessionEnd.Type) => endSession(end).pipe(Effect.orDie)
    } as const
  })
}) {
  static readonly Default = Layer.effect(this, this.make)
}
