/**
 * Runs the migrations in `./migrations/index.ts` with the @effect/sql Migrator.
 *
 * Safe when several processes start at once against one database: everything
 * runs in ONE transaction that first takes a transaction-scoped advisory lock,
 * so concurrent runners queue up and the later ones find nothing left to do.
 * The lock is released by COMMIT/ROLLBACK (also if the process dies), and the
 * whole run uses a single connection, so it cannot starve a small pool.
 *
 * Uses `Migrator.make({})` rather than `PgMigrator.run`: without a dumpSchema
 * hook nothing ever shells out to `pg_dump`, and the only requirement is
 * `SqlClient` (PgMigrator also wants FileSystem/Path/CommandExecutor).
 */
import { Effect, Layer } from "effect"
import { Migrator, SqlClient, type SqlError } from "effect/sql"
import { migrations } from "./migrations/index.ts"

export const MIGRATIONS_TABLE = "effect_sql_migrations"

/** Arbitrary constant shared by every process of this app (int8 advisory lock key). */
export const MIGRATION_LOCK_KEY = 727_001_001

export type AppliedMigrations = ReadonlyArray<readonly [id: number, name: string]>

const migrate = Migrator.make({})

const migrateLocked = (record: Record<string, Effect.Effect<void, unknown, SqlClient.SqlClient>>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* sql.withTransaction(
      Effect.gen(function*() {
        yield* sql`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`
        // Same DDL as the Migrator's own, created here so its probe finds the table:
        // a CREATE of its that failed (a concurrent runner) would abort our transaction.
        yield* sql`CREATE TABLE IF NOT EXISTS ${sql(MIGRATIONS_TABLE)} (
          migration_id integer primary key,
          created_at timestamp with time zone not null default now(),
          name text not null
        )`
        return yield* migrate({ loader: Migrator.fromRecord(record), table: MIGRATIONS_TABLE })
      })
    )
  })

/** Runs the given migrations (keyed `<id>_<name>`); returns the ones this call applied. */
export const migrateWith = (
  record: Record<string, Effect.Effect<void, unknown, SqlClient.SqlClient>>
): Effect.Effect<AppliedMigrations, Migrator.MigrationError | SqlError.SqlError, SqlClient.SqlClient> =>
  migrateLocked(record).pipe(
    Effect.tap((applied) =>
      applied.length === 0
        ? Effect.logDebug("migrations: up to date")
        : Effect.logInfo(`migrations: applied ${applied.map(([id, name]) => `${id}_${name}`).join(", ")}`)
    ),
    Effect.withSpan("db.migrate")
  )

export const runMigrations = migrateWith(migrations)

export const MigrationsLive: Layer.Layer<never, Migrator.MigrationError | SqlError.SqlError, SqlClient.SqlClient> =
  Layer.effectDiscard(runMigrations)
