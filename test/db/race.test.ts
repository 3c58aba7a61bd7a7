/**
 * Can the concurrency tests fail? A race planted in a copy of the txHash claim (check, then insert)
 * must be caught on the test database, the way test/payouts/concurrency.test.ts would catch it in the
 * service. Every claimant holds its own connection and transaction, and a barrier makes all of them
 * finish their check before any inserts: the interleaving that claimants sharing one connection
 * can never produce.
 */
import { PgClient } from "@effect/sql-pg"
import { expect, layer } from "@effect/vitest"
import { Deferred, Effect, Layer, Redacted, Result } from "effect"
import { SqlClient } from "effect/sql"
import { readFileSync } from "node:fs"
import { TestDatabaseInfo, TestDatabaseMigrated } from "../support/database.ts"
import { repoRoot } from "../support/process.ts"

const CLAIMANTS = 20

type Claim = (
  sql: SqlClient.SqlClient,
  hash: string,
  id: string,
  checked: Effect.Effect<void>
) => Effect.Effect<boolean, unknown>

/** The statement src/chain/TxHashClaims.ts claims with (asserted below to still be there). */
const PRODUCTION_CLAIM = "ON CONFLICT DO NOTHING RETURNING tx_hash"

const insertOnConflict: Claim = (sql, hash, id, checked) =>
  Effect.andThen(
    checked,
    Effect.map(
      sql`INSERT INTO tx_hash_claims (tx_hash, resource_kind, resource_id) VALUES (${hash}, 'payout', ${id})
          ON CONFLICT DO NOTHING RETURNING tx_hash`,
      (rows) => rows.length === 1
    )
  )

const plantedCheckThenInsert: Claim = (sql, hash, id, checked) =>
  Effect.gen(function*() {
    const taken = yield* sql`SELECT 1 FROM tx_hash_claims WHERE tx_hash = ${hash}`
    yield* checked
    if (taken.length > 0) return false
    yield* sql`INSERT INTO tx_hash_claims (tx_hash, resource_kind, resource_id) VALUES (${hash}, 'payout', ${id})`
    return true
  })

interface Outcome {
  readonly winners: number
  readonly losers: number
  readonly errors: number
}

/** CLAIMANTS transactions race for one hash; a barrier releases them once all have checked. */
const race = (claim: Claim) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const hash = `0x${crypto.randomUUID().replaceAll("-", "")}`
    const allChecked = yield* Deferred.make<void>()
    let checkedCount = 0
    const checked = Effect.suspend(() => {
      checkedCount += 1
      return checkedCount === CLAIMANTS ? Deferred.succeed(allChecked, undefined) : Effect.void
    }).pipe(Effect.andThen(Deferred.await(allChecked)))
    const results = yield* Effect.forEach(
      Array.from({ length: CLAIMANTS }, (_, i) => `payout-${i}`),
      (id) => Effect.result(sql.withTransaction(claim(sql, hash, id, checked))),
      { concurrency: "unbounded" }
    )
    const rows = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM tx_hash_claims WHERE tx_hash = ${hash}`
    expect(rows[0]?.n).toBe(1)
    return {
      winners: results.filter((r) => Result.isSuccess(r) && r.success).length,
      losers: results.filter((r) => Result.isSuccess(r) && !r.success).length,
      errors: results.filter(Result.isFailure).length
    } satisfies Outcome
  }).pipe(
    // a pool of its own, one connection per claimant, on the migrated test database
    Effect.provide(Layer.unwrap(Effect.map(TestDatabaseInfo, ({ url }) =>
      PgClient.layer({ url: Redacted.make(url), maxConnections: CLAIMANTS })))),
    Effect.timeout("30 seconds")
  )

// excludeTestServices: the real clock, so the timeout above is 30 real seconds.
layer(TestDatabaseMigrated, { excludeTestServices: true })(
  `${CLAIMANTS} transactions claiming one txHash on the test database`,
  (it) => {
    it.effect("the production claim (insert, on conflict do nothing) gives exactly one winner and no errors", () =>
      Effect.gen(function*() {
        expect(readFileSync(`${repoRoot}/src/chain/TxHashClaims.ts`, "utf8")).toContain(PRODUCTION_CLAIM)
        expect(yield* race(insertOnConflict)).toEqual({ winners: 1, losers: CLAIMANTS - 1, errors: 0 })
      }))

    it.effect("a planted check-then-insert race is caught: every other claimant fails on the unique key", () =>
      Effect.gen(function*() {
        const outcome = yield* race(plantedCheckThenInsert)
        expect(outcome.winners).toBe(1)
        // In the service each of these is a 500 instead of 409 tx_hash_reused: the HTTP race tests fail on it.
        expect(outcome.errors).toBe(CLAIMANTS - 1)
      }))
  }
)
