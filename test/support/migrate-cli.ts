/**
 * `node --import tsx test/support/migrate-cli.ts <database-url>`: runs the app's
 * migrations in a separate process and prints the applied ones as JSON on
 * stdout. Used by tests that start several processes against one database.
 */
import { Effect, Option, Redacted, References } from "effect"
import { makeSqlLayer } from "../../src/db/Database.ts"
import { runMigrations } from "../../src/db/Migrations.ts"

const url = process.argv[2]
if (!url) throw new Error("usage: migrate-cli.ts <database-url>")

const applied = await Effect.runPromise(
  runMigrations.pipe(
    Effect.provide(makeSqlLayer({ url: Option.some(Redacted.make(url)), embeddedDataDir: "unused" })),
    Effect.provideService(References.MinimumLogLevel, "Warn")
  )
)
process.stdout.write(`${JSON.stringify(applied)}\n`)
