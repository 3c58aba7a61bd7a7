import { BadRequest, IntegrationId } from "@cop-integrations/contracts"
import { Effect, Exit, Schema } from "effect"

/** What a keyset list orders by: every listed table has a creation time and a text id. */
export interface KeysetRow {
  readonly created_at: Date
  readonly id: string
}

/** What a position-ordered list orders by: a bigint, as PostgreSQL's text. */
export interface PositionedRow {
  readonly position: string
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

/** A list position as PostgreSQL's bigint text: digits, no sign, no leading zero. */
const PositionText = Schema.String.check(Schema.isPattern(/^(0|[1-9][0-9]{0,17})$/))

const PositionCursorJson = Schema.fromJsonString(Schema.Struct({ p: PositionText }))

const decodeCursorJson = Schema.decodeUnknownExit(CursorJson, { onExcessProperty: "error" })
const decodePositionCursorJson = Schema.decodeUnknownExit(PositionCursorJson, { onExcessProperty: "error" })

/** Keyset cursor: the (createdAt, id) of the last item, opaque to clients. */
const encodeCursor = (row: KeysetRow): string =>
  Buffer.from(JSON.stringify({ t: row.created_at.toISOString(), id: row.id })).toString("base64url")

/** Position cursor: the position of the last item, opaque to clients. */
const encodePositionCursor = (row: PositionedRow): string =>
  Buffer.from(JSON.stringify({ p: row.position })).toString("base64url")

const notACursor = () =>
  Effect.fail(new BadRequest({ error: "cursor: not a cursor returned by this API (pass nextCursor unchanged)" }))

const cursorText = (cursor: string) => Buffer.from(cursor, "base64url").toString("utf8")

/** A cursor is input like any other: anything but one this API returned is a 400, never a query. */
const decodeCursor = (cursor: string) =>
  Exit.match(decodeCursorJson(cursorText(cursor)), {
    onFailure: notACursor,
    onSuccess: ({ id, t }) => Effect.succeed({ createdAt: new Date(t), id })
  })

/** Where a position-ordered page starts: after a position, or after the (createdAt, id) of a keyset cursor. */
export type PositionAfter =
  | { readonly _tag: "Position"; readonly position: string }
  | { readonly _tag: "Keyset"; readonly createdAt: Date; readonly id: string }

/**
 * A position cursor, or a keyset one: the events list was ordered by (createdAt, id) before it was by position, and
 * a partner may still hold a cursor from then.
 */
const decodePositionCursor = (cursor: string): Effect.Effect<PositionAfter, BadRequest> => {
  const text = cursorText(cursor)
  return Exit.match(decodePositionCursorJson(text), {
    onFailure: () => Effect.map(decodeCursor(cursor), (after): PositionAfter => ({ _tag: "Keyset", ...after })),
    onSuccess: ({ p }) => Effect.succeed<PositionAfter>({ _tag: "Position", position: p })
  })
}

const DEFAULT_PAGE_SIZE = 50

/** The rows a page fetches: one more than it answers, to know whether another page follows. */
export const rowsFetched = (limit: number | undefined) => (limit ?? DEFAULT_PAGE_SIZE) + 1

export interface ListRequest {
  readonly integrationId: IntegrationId
  readonly createdFrom: string | undefined
  readonly limit: number | undefined
  readonly cursor: string | undefined
}

/** A page fetched with one row more than it answers: the items, and the cursor of the next page when one follows. */
const pageOf = <Row, After, Item, E, R>(
  request: ListRequest,
  decode: (cursor: string) => Effect.Effect<After, BadRequest>,
  encode: (row: Row) => string,
  fetch: (page: {
    readonly integrationId: IntegrationId
    readonly createdFrom: Date | null
    readonly after: After | null
    readonly limit: number
  }) => Effect.Effect<ReadonlyArray<Row>, E, R>,
  present: (row: Row) => Item
) =>
  Effect.gen(function*() {
    const limit = request.limit ?? DEFAULT_PAGE_SIZE
    const after = request.cursor === undefined ? null : yield* decode(request.cursor)
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
      nextCursor: rows.length > limit && last !== undefined ? encode(last) : null
    }
  })

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
) => pageOf(request, decodeCursor, encodeCursor, fetch, present)

/**
 * One page of a list ordered by a position (the events list): as `keysetPage`, its cursor carrying the last item's
 * position; a keyset cursor is still understood (see `decodePositionCursor`).
 */
export const positionPage = <Row extends PositionedRow, Item, E, R>(
  request: ListRequest,
  fetch: (page: {
    readonly integrationId: IntegrationId
    readonly createdFrom: Date | null
    readonly after: PositionAfter | null
    readonly limit: number
  }) => Effect.Effect<ReadonlyArray<Row>, E, R>,
  present: (row: Row) => Item
) => pageOf(request, decodePositionCursor, encodePositionCursor, fetch, present)
