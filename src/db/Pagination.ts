import { BadRequest, IntegrationId } from "@cop-integrations/contracts"
import { Effect, Exit, Schema } from "effect"

/** What a keyset list orders by: every listed table has a creation time and a text id. */
export interface KeysetRow {
  readonly created_at: Date
  readonly id: string
}

/** What a repository's page query receives: the tenant, the optional lower bound, the keyset position and size. */
export const PageRequest = Schema.Struct({
  integrationId: IntegrationId,
  createdFrom: Schema.NullOr(Schema.Date),
  after: Schema.NullOr(Schema.Struct({ createdAt: Schema.Date, id: Schema.String })),
  limit: Schema.Number
})

/** Rows expired per sweep round (each with its event); the next round takes the rest. */
export const EXPIRY_BATCH = 500

/** Exactly what `toISOString` writes for the years PostgreSQL and the API use (0000-9999, milliseconds, UTC). */
const CursorTimestamp = Schema.String.check(
  Schema.isPattern(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
  Schema.makeFilter((value) => {
    const time = Date.parse(value)
    return !Number.isNaN(time) && new Date(time).toISOString() === value
  })
)

const CursorJson = Schema.fromJsonString(
  Schema.Struct({ t: CursorTimestamp, id: Schema.String.check(Schema.isPattern(/^[A-Za-z0-9_]{1,64}$/)) })
)

const decodeCursorJson = Schema.decodeUnknownExit(CursorJson, { onExcessProperty: "error" })

/** Keyset cursor: the (createdAt, id) of the last item, opaque to clients. */
const encodeCursor = (row: KeysetRow): string =>
  Buffer.from(JSON.stringify({ t: row.created_at.toISOString(), id: row.id })).toString("base64url")

/** A cursor is input like any other: anything but one this API returned is a 400, never a query. */
const decodeCursor = (cursor: string) =>
  Exit.match(decodeCursorJson(Buffer.from(cursor, "base64url").toString("utf8")), {
    onFailure: () =>
      Effect.fail(new BadRequest({ error: "cursor: not a cursor returned by this API (pass nextCursor unchanged)" })),
    onSuccess: ({ id, t }) => Effect.succeed({ createdAt: new Date(t), id })
  })

const DEFAULT_PAGE_SIZE = 50

/** The rows a page fetches: one more than it answers, to know whether another page follows. */
export const rowsFetched = (limit: number | undefined) => (limit ?? DEFAULT_PAGE_SIZE) + 1

export interface ListRequest {
  readonly integrationId: IntegrationId
  readonly createdFrom: string | undefined
  readonly limit: number | undefined
  readonly cursor: string | undefined
}

/**
 * One keyset page of an integration's resources, ordered by (createdAt, id): fetches one row more than the page to
 * know whether another page follows, and answers `{ integrationId, items, nextCursor }`.
 */
export const keysetPage = <Row extends KeysetRow, Item, E, R>(
  request: ListRequest,
  fetch: (page: {
    readonly integrationId: IntegrationId
    readonly createdFrom: Date | null
    readonly after: { readonly createdAt: Date; readonly id: string } | null
    readonly limit: number
  }) => Effect.Effect<ReadonlyArray<Row>, E, R>,
  present: (row: Row) => Item
) =>
  Effect.gen(function*() {
    const limit = request.limit ?? DEFAULT_PAGE_SIZE
    const after = request.cursor === undefined ? null : yield* decodeCursor(request.cursor)
    const rows = yield* fetch({
      integrationId: request.integrationId,
      createdFrom: request.createdFrom === undefined ? null : new Date(request.createdFrom),
      after,
      limit: rowsFetched(limit)
    })
    const items = rows.slice(0, limit)
    const last = items[items.length - 1]
    return {
      integrationId: request.integrationId,
      items: items.map(present),
      nextCursor: rows.length > limit && last !== undefined ? encodeCursor(last) : null
    }
  })
