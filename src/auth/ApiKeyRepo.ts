import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { newId } from "../ids.ts"
import { generateApiKey, hashApiKey, type KeyKind, last4 } from "./ApiKey.ts"

const KeyKindSchema = Schema.Literal("test", "live")

export const ApiKeyRow = Schema.Struct({
  id: Schema.String,
  integration_id: Schema.String,
  integration_name: Schema.String,
  kind: KeyKindSchema,
  last4: Schema.String,
  created_at: Schema.DateFromSelf,
  revoked_at: Schema.NullOr(Schema.DateFromSelf)
})
export type ApiKeyRow = typeof ApiKeyRow.Type

export class ApiKeyRepo extends Effect.Service<ApiKeyRepo>()("ApiKeyRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const columns = sql`k.id, k.integration_id, i.name AS integration_name, k.kind, k.last4, k.created_at, k.revoked_at`

    const findActiveByHash = SqlSchema.findOne({
      Request: Schema.String,
      Result: ApiKeyRow,
      execute: (hash) =>
        sql`SELECT ${columns} FROM api_keys k JOIN integrations i ON i.id = k.integration_id
            WHERE k.key_hash = ${hash} AND k.revoked_at IS NULL`
    })

    const list = SqlSchema.findAll({
      Request: Schema.Void,
      Result: ApiKeyRow,
      execute: () =>
        sql`SELECT ${columns} FROM api_keys k JOIN integrations i ON i.id = k.integration_id
            ORDER BY k.created_at, k.id`
    })

    const revoke = SqlSchema.findOne({
      Request: Schema.String,
      Result: Schema.Struct({ id: Schema.String }),
      execute: (id) => sql`UPDATE api_keys SET revoked_at = now() WHERE id = ${id} AND revoked_at IS NULL RETURNING id`
    })

    /** Creates a key and returns it in full: the only time it exists outside the caller's hands. */
    const issue = (integrationId: string, kind: KeyKind) =>
      Effect.gen(function*() {
        const key = generateApiKey(kind)
        const id = newId("key")
        yield* sql`INSERT INTO api_keys ${
          sql.insert({ id, integration_id: integrationId, kind, key_hash: hashApiKey(key), last4: last4(key) })
        }`
        return { id, key } as const
      }).pipe(Effect.orDie)

    return {
      issue,
      findActiveByHash: (hash: string) => findActiveByHash(hash).pipe(Effect.orDie),
      list: list(undefined).pipe(Effect.orDie),
      revoke: (id: string) => revoke(id).pipe(Effect.orDie)
    } as const
  })
}) {}
