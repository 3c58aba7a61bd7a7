import { createHash } from "node:crypto"
import { SqlSchema } from "@effect/sql"
import { SqlError } from "@effect/sql/SqlError"
import { PgClient } from "@effect/sql-pg"
import { Conflict, IdempotencyKeyReused } from "@cop-integrations/contracts"
import { Context, Duration, Effect, Option, Schema } from "effect"

export interface StoredResponse {
  readonly status: number
  readonly body: unknown
  readonly resourceId: string
}

export interface IdempotentResult extends StoredResponse {
  readonly replayed: boolean
}

const canonicalJson = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined).sort(([a], [b]) => (a < b ? -1 : 1))
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`
  }
  return JSON.stringify(value)
}

/** What makes two requests "the same": method, path and the canonical JSON of the body. */
export const requestFingerprint = (method: string, path: string, body: unknown): string =>
  createHash("sha256").update(`${method} ${path}\n${canonicalJson(body)}`).digest("hex")

const StoredRow = Schema.Struct({
  request_hash: Schema.String,
  response_status: Schema.Number,
  response_body: Schema.Unknown,
  resource_id: Schema.String
})

/**
 * The body is kept as its JSON text (a jsonb string): a jsonb object would come back with its keys
 * reordered, and a replay must be byte for byte the first response.
 */
const storedBody = (stored: unknown): unknown => (typeof stored === "string" ? JSON.parse(stored) : stored)

const LOCK_NOT_AVAILABLE = "55P03"

const isLockTimeout = (error: SqlError) =>
  typeof error.cause === "object" && error.cause !== null && (error.cause as { code?: unknown }).code === LOCK_NOT_AVAILABLE

/**
 * How long a duplicate waits for the request that holds its key (DESIGN §3: 10 s). Only the claim
 * waits this long; the request that holds the key runs under the pool's ordinary timeouts.
 */
export class IdempotencyWait extends Context.Reference<IdempotencyWait>()("IdempotencyWait", {
  defaultValue: () => Duration.seconds(10)
}) {}

/**
 * `Idempotency-Key` semantics: the key's row is inserted in the same transaction that creates the
 * resource, so a concurrent duplicate blocks on the primary key until the first commits (then replays)
 * or rolls back (then runs itself). Only successes are stored; a failure leaves the key free.
 */
export class IdempotencyStore extends Effect.Service<IdempotencyStore>()("IdempotencyStore", {
  effect: Effect.gen(function*() {
    const sql = yield* PgClient.PgClient
    const waitMillis = Math.max(1, Math.round(Duration.toMillis(yield* IdempotencyWait)))

    const findStored = SqlSchema.findOne({
      Request: Schema.Struct({ integrationId: Schema.String, key: Schema.String }),
      Result: StoredRow,
      execute: ({ integrationId, key }) =>
        sql`SELECT request_hash, response_status, response_body, resource_id FROM idempotency_keys
            WHERE integration_id = ${integrationId} AND idempotency_key = ${key}`
    })

    /**
     * Inserts the key's placeholder row; false when the key is taken. A duplicate blocks here on the
     * primary key while the first request's transaction is open, for at most the wait; after the claim
     * the transaction's lock_timeout is the session's again.
     */
    const claim = (input: { readonly integrationId: string; readonly key: string; readonly fingerprint: string }) =>
      Effect.gen(function*() {
        yield* sql`SELECT set_config('lock_timeout', ${`${waitMillis}ms`}, true)`
        const claimed = yield* sql`
          INSERT INTO idempotency_keys
            (integration_id, idempotency_key, request_hash, response_status, response_body, resource_id)
          VALUES (${input.integrationId}, ${input.key}, ${input.fingerprint}, 0, '{}'::jsonb, '')
          ON CONFLICT DO NOTHING RETURNING 1 AS claimed`
        yield* sql`SET LOCAL lock_timeout TO DEFAULT`
        return claimed.length > 0
      }).pipe(
        Effect.catchIf(isLockTimeout, () =>
          Effect.fail(new Conflict({ error: "a request with this Idempotency-Key is still in progress; retry later" })))
      )

    const run = <E, R>(
      input: { readonly integrationId: string; readonly key: string; readonly fingerprint: string },
      create: Effect.Effect<StoredResponse, E, R>
    ): Effect.Effect<IdempotentResult, E | IdempotencyKeyReused | Conflict, R> =>
      Effect.gen(function*() {
        if (!(yield* claim(input))) {
          const stored = yield* findStored({ integrationId: input.integrationId, key: input.key }).pipe(
            Effect.catchTag("ParseError", Effect.die)
          )
          if (Option.isNone(stored)) {
            return yield* Effect.fail(new Conflict({ error: "a request with this Idempotency-Key is still in progress" }))
          }
          if (stored.value.request_hash !== input.fingerprint) {
            return yield* Effect.fail(
              new IdempotencyKeyReused({
                error: "Idempotency-Key was already used with a different request body; use a new key"
              })
            )
          }
          return {
            status: stored.value.response_status,
            body: storedBody(stored.value.response_body),
            resourceId: stored.value.resource_id,
            replayed: true
          }
        }
        const created = yield* create
        yield* sql`UPDATE idempotency_keys
                   SET response_status = ${created.status}, response_body = ${JSON.stringify(JSON.stringify(created.body))}::jsonb,
                       resource_id = ${created.resourceId}
                   WHERE integration_id = ${input.integrationId} AND idempotency_key = ${input.key}`
        return { ...created, replayed: false }
      }).pipe(
        sql.withTransaction,
        Effect.catchIf((error): error is SqlError => error instanceof SqlError, Effect.die)
      )

    return { run } as const
  })
}) {}
