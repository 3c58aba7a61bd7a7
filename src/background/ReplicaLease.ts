import { Effect, Schema } from "effect"
import type { SqlClient } from "effect/sql"
import { newInternalId } from "../base/ids.ts"

/** This process as a lease owner: random, so a restarted replica is a new owner and waits out its old leases. */
export const processOwner = newInternalId("replica")

export interface LeaseRequest {
  readonly name: string
  readonly owner: string
  /** How long the lease stays with `owner` after this round unless renewed: a dead owner's lease lapses then. */
  readonly holdForMs: number
}

const Taken = Schema.Struct({ owner: Schema.String })

/**
 * Takes or renews the lease `name` for `owner` in the current transaction; true when `owner` holds it. Taken when it is
 * free, already `owner`'s, or expired, on the database's clock so replicas with skewed clocks agree. The row stays
 * locked until the transaction ends, so a round done in it never overlaps another owner's, even past the expiry.
 *
 * The NOT EXISTS reads the lease without locking it: a replica finding another owner's live lease answers false at
 * once instead of waiting for that owner's round to commit. The upsert's WHERE decides under the row lock, so of two
 * replicas taking an expired lease at once, the one that waited finds the other's fresh lease and answers false.
 */
export const takeLease = (sql: SqlClient.SqlClient, { holdForMs, name, owner }: LeaseRequest) =>
  Effect.gen(function*() {
    const rows = yield* sql`
      INSERT INTO replica_leases (name, owner, expires_at)
      SELECT ${name}, ${owner}, now() + ${holdForMs} * interval '1 millisecond'
      WHERE NOT EXISTS (SELECT 1 FROM replica_leases WHERE name = ${name} AND owner <> ${owner} AND expires_at > now())
      ON CONFLICT (name) DO UPDATE SET owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at
      WHERE replica_leases.owner = EXCLUDED.owner OR replica_leases.expires_at <= now()
      RETURNING owner`
    return (yield* Schema.decodeUnknownEffect(Schema.Array(Taken))(rows)).length > 0
  })
