import type { Requote } from "@cop-integrations/contracts"
import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient, type SqlError, SqlSchema } from "effect/sql"

/** What a transaction hash confirms: one hash, one use, across payouts, batches and swaps (compared lower-cased). */
export type ClaimKind = "payout" | "payout_batch" | "swap"

const ClaimedHash = Schema.Struct({ tx_hash: Schema.String })
const ReleasedClaim = Schema.Struct({
  tx_hash: Schema.String,
  resource_kind: Schema.String,
  resource_id: Schema.String
})

/**
 * Claims on transaction hashes. A confirm claims its hash `verifying` (under the resource's row lock), checks the
 * chain outside any transaction, then marks it `claimed` or releases it. The primary key makes a hash claimable once;
 * the reconciler releases `verifying` claims a crash left behind.
 */
export class TxHashClaims extends Context.Service<TxHashClaims>()("TxHashClaims", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    /**
     * False when the hash is already claimed (by anything). Requote: the deposit is too late to be taken as the
     * resource's; this ledger never says so, mock mode's (`TxHashClaimsMock`) does under its `requote` scenario.
     */
    const claim = (
      kind: ClaimKind,
      resourceId: string,
      hash: string
    ): Effect.Effect<boolean, SqlError.SqlError | Requote> =>
      Effect.map(
        sql`INSERT INTO tx_hash_claims (tx_hash, resource_kind, resource_id, state) VALUES (${hash}, ${kind}, ${resourceId}, 'verifying')
            ON CONFLICT DO NOTHING RETURNING tx_hash`,
        (rows) => rows.length === 1
      )

    const verifyingOf = (kind: ClaimKind, resourceId: string) =>
      sql`SELECT tx_hash FROM tx_hash_claims
          WHERE resource_kind = ${kind} AND resource_id = ${resourceId} AND state = 'verifying'`.pipe(
        Effect.flatMap(Schema.decodeUnknownEffect(Schema.Array(ClaimedHash))),
        Effect.orDie,
        Effect.map((rows) => rows.map((row) => row.tx_hash))
      )

    /** How many of `hashes` were still this resource's `verifying` claims (now `claimed`). */
    const markClaimed = (kind: ClaimKind, resourceId: string, hashes: ReadonlyArray<string>) =>
      sql`UPDATE tx_hash_claims SET state = 'claimed'
          WHERE tx_hash IN ${sql.in(hashes)} AND resource_kind = ${kind} AND resource_id = ${resourceId}
            AND state = 'verifying'
          RETURNING tx_hash`.pipe(Effect.map((rows) => rows.length))

    const release = (kind: ClaimKind, resourceId: string, hashes: ReadonlyArray<string>) =>
      sql`DELETE FROM tx_hash_claims
          WHERE tx_hash IN ${sql.in(hashes)} AND resource_kind = ${kind} AND resource_id = ${resourceId}
            AND state = 'verifying'`.pipe(
        Effect.asVoid,
        Effect.catchCause((cause) =>
          Effect.logWarning("could not release a txHash claim; the reconciler will", { kind, resourceId, cause })
        )
      )

    /** Deletes the `verifying` claims made before `cutoff` (their confirm crashed); answers them. */
    const releaseStale = SqlSchema.findAll({
      Request: Schema.Date,
      Result: ReleasedClaim,
      execute: (cutoff) =>
        sql`DELETE FROM tx_hash_claims WHERE state = 'verifying' AND claimed_at < ${cutoff}
                                RETURNING tx_hash, resource_kind, resource_id`
    })

    return { claim, verifyingOf, markClaimed, release, releaseStale } as const
  })
}) {
  static readonly Default = Layer.effect(this, this.make)
}
