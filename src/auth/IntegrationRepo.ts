import { IntegrationId } from "@cop-integrations/contracts"
import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { newId } from "../base/ids.ts"

export const IntegrationRow = Schema.Struct({
  id: IntegrationId,
  name: Schema.String,
  created_at: Schema.Date
})
export type IntegrationRow = typeof IntegrationRow.Type

export class IntegrationRepo extends Context.Service<IntegrationRepo>()("IntegrationRepo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const findByName = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: IntegrationRow,
      execute: (name) => sql`SELECT id, name, created_at FROM integrations WHERE name = ${name}`
    })

    const insert = SqlSchema.findOne({
      Request: Schema.Struct({ id: IntegrationId, name: Schema.String }),
      Result: IntegrationRow,
      execute: (row) =>
        sql`INSERT INTO integrations ${sql.insert(row)} ON CONFLICT (name) DO UPDATE SET name = EXCLUDED.name
            RETURNING id, name, created_at`
    })

    const count = SqlSchema.findOne({
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
}) {
  static readonly Default = Layer.effect(this, this.make)
}
