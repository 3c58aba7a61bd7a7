import { SqlClient, SqlSchema } from "effect/sql"
import { IntegrationId } from "@cop-integrations/contracts"
import { Context, Effect, Layer, Schema } from "effect"

const ChallengeRow = Schema.Struct({
  id: Schema.String,
  code_hash: Schema.String,
  attempts: Schema.Number,
  expires_at: Schema.Date
})

const SendStats = Schema.Struct({
  sends_today: Schema.NumberFromString,
  last_sent_at: Schema.NullOr(Schema.Date),
  /** The send that, once it leaves the rolling 24 h window, brings the count under the daily limit. */
  limiting_sent_at: Schema.NullOr(Schema.Date)
})
export type SendStats = typeof SendStats.Type

const Owner = Schema.Struct({ integrationId: IntegrationId, userAddress: Schema.String })
type Owner = typeof Owner.Type

const IdRow = Schema.Struct({ id: Schema.String })
const ids = (rows: ReadonlyArray<typeof IdRow.Type>) => rows.map((row) => row.id)

const NewChallenge = Schema.Struct({
  id: Schema.String,
  integration_id: IntegrationId,
  user_address: Schema.String,
  email: Schema.String,
  code_hash: Schema.String,
  created_at: Schema.Date,
  expires_at: Schema.Date
})

/**
 * OTP challenges, keyed by (integration, lower-cased wallet address): every query names the integration. The caller
 * holds the transaction: `lockOwner` serialises sends and verifies of one user within it.
 */
export class OtpRepo extends Context.Service<OtpRepo>()("OtpRepo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    // One advisory lock per (integration, address) serialises sends and verifies of the same user.
    const lockOwner = SqlSchema.void({
      Request: Owner,
      execute: ({ integrationId, userAddress }) =>
        sql`SELECT pg_advisory_xact_lock(hashtext(${`otp:${integrationId}:${userAddress}`}))`
    })

    const sendStats = SqlSchema.findOne({
      Request: Schema.Struct({ ...Owner.fields, since: Schema.Date, dailyLimit: Schema.Number }),
      Result: SendStats,
      execute: ({ dailyLimit, integrationId, since, userAddress }) =>
        sql`SELECT count(*)::text AS sends_today, max(created_at) AS last_sent_at,
                   (SELECT created_at FROM otp_challenges
                    WHERE integration_id = ${integrationId} AND user_address = ${userAddress} AND created_at > ${since}
                    ORDER BY created_at DESC OFFSET ${dailyLimit - 1} LIMIT 1) AS limiting_sent_at
            FROM otp_challenges
            WHERE integration_id = ${integrationId} AND user_address = ${userAddress} AND created_at > ${since}`
    })

    const activeChallenge = SqlSchema.findOneOption({
      Request: Owner,
      Result: ChallengeRow,
      execute: ({ integrationId, userAddress }) =>
        sql`SELECT id, code_hash, attempts, expires_at FROM otp_challenges
            WHERE integration_id = ${integrationId} AND user_address = ${userAddress} AND consumed_at IS NULL
            ORDER BY created_at DESC LIMIT 1 FOR UPDATE`
    })

    const supersede = SqlSchema.findAll({
      Request: Schema.Struct({ ...Owner.fields, at: Schema.Date }),
      Result: IdRow,
      execute: ({ at, integrationId, userAddress }) =>
        sql`
          UPDATE otp_challenges SET consumed_at = ${at}
          WHERE integration_id = ${integrationId} AND user_address = ${userAddress} AND consumed_at IS NULL
          RETURNING id`
    })

    const insert = SqlSchema.void({
      Request: NewChallenge,
      execute: (row) => sql`INSERT INTO otp_challenges ${sql.insert(row)}`
    })

    const deleteUnconsumed = SqlSchema.findAll({
      Request: Schema.String,
      Result: IdRow,
      execute: (id) => sql`DELETE FROM otp_challenges WHERE id = ${id} AND consumed_at IS NULL RETURNING id`
    })

    const restoreSuperseded = SqlSchema.void({
      Request: Schema.Struct({ ...Owner.fields, ids: Schema.Array(Schema.String) }),
      execute: ({ ids, integrationId, userAddress }) =>
        sql`UPDATE otp_challenges SET consumed_at = NULL
                   WHERE id IN ${sql.in(ids)}
                     AND NOT EXISTS (SELECT 1 FROM otp_challenges active
                                     WHERE active.integration_id = ${integrationId}
                                       AND active.user_address = ${userAddress} AND active.consumed_at IS NULL)`
    })

    const restoreConsumed = SqlSchema.void({
      Request: Schema.Struct({ ...Owner.fields, challengeId: Schema.String, consumedAt: Schema.Date }),
      execute: ({ challengeId, consumedAt, integrationId, userAddress }) =>
        sql`UPDATE otp_challenges SET consumed_at = NULL
          WHERE id = ${challengeId} AND consumed_at = ${consumedAt}
            AND NOT EXISTS (SELECT 1 FROM otp_challenges newer
                            WHERE newer.integration_id = ${integrationId} AND newer.user_address = ${userAddress}
                              AND newer.consumed_at IS NULL)`
    })

    const countAttempt = SqlSchema.void({
      Request: Schema.String,
      execute: (id) => sql`UPDATE otp_challenges SET attempts = attempts + 1 WHERE id = ${id}`
    })

    const consume = SqlSchema.void({
      Request: Schema.Struct({ id: Schema.String, at: Schema.Date }),
      execute: ({ at, id }) => sql`UPDATE otp_challenges SET consumed_at = ${at} WHERE id = ${id}`
    })

    return {
      lockOwner: (owner: Owner) => lockOwner(owner).pipe(Effect.orDie),
      /** Sends in the window since `since`, the latest, and the one whose leaving it lifts the `dailyLimit`. */
      sendStats: (owner: Owner, since: Date, dailyLimit: number) =>
        sendStats({ ...owner, since, dailyLimit }).pipe(Effect.orDie),
      /** The newest unconsumed challenge, locked. */
      activeChallenge: (owner: Owner) => activeChallenge(owner).pipe(Effect.orDie),
      /** Consumes the owner's active challenges at `at`; answers their ids. */
      supersede: (owner: Owner, at: Date) => supersede({ ...owner, at }).pipe(Effect.orDie, Effect.map(ids)),
      insert: (row: typeof NewChallenge.Type) => insert(row).pipe(Effect.orDie),
      /** Deletes the challenge unless it was consumed; whether it did. */
      deleteUnconsumed: (id: string) => deleteUnconsumed(id).pipe(Effect.orDie, Effect.map((rows) => rows.length > 0)),
      /** Makes the challenges `ids` active again, unless another of the owner's is active. */
      restoreSuperseded: (owner: Owner, ids: ReadonlyArray<string>) =>
        restoreSuperseded({ ...owner, ids }).pipe(Effect.orDie),
      /** Makes a challenge consumed at `consumedAt` active again, unless a newer one of the owner's is active. */
      restoreConsumed: (owner: Owner, consumed: { readonly challengeId: string; readonly consumedAt: Date }) =>
        restoreConsumed({ ...owner, challengeId: consumed.challengeId, consumedAt: consumed.consumedAt }).pipe(
          Effect.orDie
        ),
      countAttempt: (id: string) => countAttempt(id).pipe(Effect.orDie),
      consume: (id: string, at: Date) => consume({ id, at }).pipe(Effect.orDie)
    } as const
  })
}) {
  static readonly Default = Layer.effect(this, this.make)
}
