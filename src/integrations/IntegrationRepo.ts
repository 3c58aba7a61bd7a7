import { SqlClient, SqlSchema } from "@effect/sql"
import { IntegrationId } from "@cop-integrations/contracts"
import { Effect, Schema } from "effect"
import { newId } from "../base/ids.ts"

export const IntegrationRow = Schema.Struct({
  id: IntegrationId,
  name: Schema.String,
  created_at: Schema.DateFromSelf
})
export type IntegrationRow = typeof IntegrationRow.Type

export class IntegrationRepo extends Effect.Service<IntegrationRepo>()("IntegrationRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const findByName = SqlSchema.findOne({
      Request: Schema.String,
      Result: IntegrationRow,
      execute: (name) => sql`SELECT id, name, created_at FROM integrations WHERE name = ${name}`
    })

    const insert = SqlSchema.single({
      Request: Schema.Struct({ id: IntegrationId, name: Schema.String }),
      Result: IntegrationRow,
      execute: (row) =>
        sql`INSERT INTO integrations ${sql.insert(row)} ON CONFLICT (name) DO UPDATE SET name = EXCLUDED.name
            RETURNING id, name, created_at`
    })

    const count = SqlSchema.single({
      Request: Schema.Void,
      Result: Schema.Struct({ n: Schema.NumberFromString }),
      execute: () => sql`SELECT count(*)::text AS n FROM integrations`
    })

    return {
      /** The integration with this name, created if missing (safe under concurrent callers). */
      ensure: (name: string) => insert({ id: newId("int"), name }).pipe(Effect.orDie),
      findByName: (name: string) => findByName(name).pipe(Effect.orDie),
      isEmpty: count(undefined).pipe(Effect.map(({ n }) => n === 0), Effect.orDie)
    } as const
  })
}) {}
