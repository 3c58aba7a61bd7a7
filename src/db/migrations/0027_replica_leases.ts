import { SqlClient } from "effect/sql"
import { Effect } from "effect"

/**
 * Mutexes between replicas as rows instead of global advisory locks (issue #32: the same on PostgreSQL, PgBouncer in
 * transaction mode and distributed engines). A lease names the replica that holds a background round (`owner`) until
 * `expires_at`, on the database's clock (`background/ReplicaLease.ts`). The `deliveries:claim` row is never held as a
 * lease (it never expires for another owner): delivery claims lock it FOR UPDATE to take turns.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE replica_leases (
    name text PRIMARY KEY,
    owner text NOT NULL,
    expires_at timestamptz NOT NULL
  )`
  yield* sql`INSERT INTO replica_leases (name, owner, expires_at) VALUES ('deliveries:claim', 'row lock', 'infinity')`
})
