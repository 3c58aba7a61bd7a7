import { IntegrationId } from "@cop-integrations/contracts"
import { Effect, Schema } from "effect"
import { SchemaJITCompiler } from "effect/schema"
import { type SqlClient, SqlSchema, Statement } from "effect/sql"
import { atomically } from "./Atomically.ts"
import { type CreatedTable, visibleBefore } from "./ListHorizon.ts"
import { EXPIRY_BATCH, type KeysetRow, PageRequest } from "./Pagination.ts"

/** A piece of SQL passed through a request schema as it is (it is not data to encode). */
const SqlFragment = Schema.declare(Statement.isFragment, { expected: "an SQL fragment" })

/**
 * The queries a table of resources owned by an integration shares (payouts, swap intents), each row read as `Row`.
 * Every query names the integration: another integration's resource is simply not found. The table has `id`,
 * `integration_id`, `status`, `created_at`, `updated_at` and `expires_at`; a resource still `expiresWhile` past its
 * `expires_at` is due to expire. Its rows are inserted with `created_at` from `creationTime` (./ListHorizon.ts), and
 * a page lists only rows no create in flight can still precede, so the list is safe to follow with its cursor.
 */
export const ownedTable = <A extends KeysetRow & { readonly id: Id }, I, Id extends string>(
  sql: SqlClient.SqlClient,
  options: {
    readonly table: CreatedTable
    readonly Row: Schema.Codec<A, I>
    /** The resource's id type (`PayoutId`, `SwapId`). */
    readonly Id: Schema.Codec<Id, string>
    readonly expiresWhile: string
    /** More to set on a resource as it expires at `at` (`, column = …`), in the same statement. */
    readonly alsoOnExpiry?: (at: Date) => Statement.Fragment
  }
) => {
  // Every row read is still decoded with `Row`, by a decoder the schema library generates for it once (a list page
  // decodes up to 501 rows: a third of the interpreted decoder's time, same results and same errors).
  SchemaJITCompiler.enable(options.Row.ast)
  const Owned = Schema.Struct({ integrationId: IntegrationId, id: options.Id })
  const table = sql(options.table)
  // A literal, not a parameter: the planner then serves the sweep from the partial index over that status.
  const expiresWhile = sql.literal(`'${options.expiresWhile}'`)

  const findOwned = SqlSchema.findOneOption({
    Request: Owned,
    Result: options.Row,
    execute: ({ id, integrationId }) =>
      sql`SELECT * FROM ${table} WHERE id = ${id} AND integration_id = ${integrationId}`
  })

  const lockOwned = SqlSchema.findOneOption({
    Request: Owned,
    Result: options.Row,
    execute: ({ id, integrationId }) =>
      sql`SELECT * FROM ${table} WHERE id = ${id} AND integration_id = ${integrationId} FOR UPDATE`
  })

  // `where`: the list's other filters, as `AND …` conditions on the table's columns (built by the repository).
  const page = SqlSchema.findAll({
    Request: Schema.Struct({ ...PageRequest.fields, before: Schema.Date, where: SqlFragment }),
    Result: options.Row,
    execute: ({ after, before, createdFrom, createdTo, integrationId, limit, where }) =>
      sql`SELECT * FROM ${table}
          WHERE integration_id = ${integrationId} AND created_at < ${before}
          ${createdFrom === null ? sql`` : sql`AND created_at >= ${createdFrom}`}
          ${createdTo === null ? sql`` : sql`AND created_at < ${createdTo}`}
          ${where}
          ${after === null ? sql`` : sql`AND (created_at, id) > (${after.createdAt}, ${after.id})`}
          ORDER BY created_at, id
          LIMIT ${limit}`
  })

  const expireOverdue = SqlSchema.findAll({
    Request: Schema.Date,
    Result: options.Row,
    execute: (at) =>
      sql`UPDATE ${table} SET status = 'expired', updated_at = ${at}${options.alsoOnExpiry?.(at) ?? sql``}
          WHERE id IN (SELECT id FROM ${table} WHERE status = ${expiresWhile} AND expires_at < ${at}
                       ORDER BY expires_at LIMIT ${EXPIRY_BATCH} FOR UPDATE SKIP LOCKED)
          RETURNING *`
  })

  // Sandbox time travel: the resource's deadline moved to `to` (never later), if it is still one that expires.
  const closeWindow = SqlSchema.findOneOption({
    Request: Schema.Struct({ ...Owned.fields, to: Schema.Date }),
    Result: options.Row,
    execute: ({ id, integrationId, to }) =>
      sql`UPDATE ${table} SET expires_at = LEAST(expires_at, ${to})
          WHERE id = ${id} AND integration_id = ${integrationId} AND status = ${expiresWhile}
          RETURNING *`
  })

  return {
    findOwned: (integrationId: IntegrationId, id: Id) => findOwned({ integrationId, id }).pipe(Effect.orDie),
    lockOwned: (integrationId: IntegrationId, id: Id) => lockOwned({ integrationId, id }).pipe(Effect.orDie),
    /**
     * One page of the list; `where` narrows it (`AND status = …`, from the repository's own filters). The horizon is
     * the same whatever the filters: a row is listed only once nothing still being created can come before it.
     */
    page: (request: typeof PageRequest.Type, where: Statement.Fragment = sql``) =>
      visibleBefore(sql, options.table, request.integrationId).pipe(
        Effect.flatMap((before) => page({ ...request, before, where })),
        Effect.orDie
      ),
    /**
     * Sandbox only: moves a resource still `expiresWhile` to be due at `to` (never later than it was); none when it is
     * not the integration's or no longer expires.
     */
    closeWindow: (integrationId: IntegrationId, id: Id, to: Date) =>
      closeWindow({ integrationId, id, to }).pipe(Effect.orDie),
    /**
     * Expires one batch of due resources (EXPIRY_BATCH), each with its event recorded in the same transaction, then
     * `afterAll` of them (what follows from several at once, in an order of its own).
     */
    expireOverdue: <E, R, E2 = never, R2 = never>(
      recordEvent: (row: A) => Effect.Effect<unknown, E, R>,
      afterAll?: (rows: ReadonlyArray<A>) => Effect.Effect<unknown, E2, R2>
    ) =>
    (at: Date) =>
      expireOverdue(at).pipe(
        Effect.tap(Effect.forEach(recordEvent)),
        Effect.tap((rows) => afterAll?.(rows) ?? Effect.void),
        atomically(sql),
        Effect.orDie,
        Effect.asVoid
      )
  } as const
}
