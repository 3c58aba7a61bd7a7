import { createHash } from "node:crypto"
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

/**
 * What a repository's page query receives: the tenant, the optional bounds on creation time (`createdFrom` inclusive,
 * `createdTo` exclusive), the keyset position and size.
 */
export const PageRequest = Schema.Struct({
  integrationId: IntegrationId,
  createdFrom: Schema.NullOr(Schema.Date),
  createdTo: Schema.NullOr(Schema.Date),
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

/** A filtered list's digest of its filters (`filterDigest`), as its cursors carry it. */
const DigestText = Schema.String.check(Schema.isPattern(/^[A-Za-z0-9_-]{16}$/))

const CursorJson = Schema.fromJsonString(
  Schema.Struct({
    t: CursorTimestamp,
    id: Schema.String.check(Schema.isPattern(/^[A-Za-z0-9_]{1,64}$/)),
    f: Schema.optionalKey(DigestText)
  })
)

/** A list position as PostgreSQL's bigint text: digits, no sign, no leading zero. */
const PositionText = Schema.String.check(Schema.isPattern(/^(0|[1-9][0-9]{0,17})$/))

const PositionCursorJson = Schema.fromJsonString(Schema.Struct({ p: PositionText, f: Schema.optionalKey(DigestText) }))

const decodeCursorJson = Schema.decodeUnknownExit(CursorJson, { onExcessProperty: "error" })
const decodePositionCursorJson = Schema.decodeUnknownExit(PositionCursorJson, { onExcessProperty: "error" })

/**
 * The digest of a filtered list's filters, which its cursors carry, so a cursor continues only the list that returned
 * it: null when none of `binding` (the filters added since the first lists) is given, whose cursors carry none, as
 * every list's did before; else a digest of all of them and of `also` (the first lists' own: `createdFrom`, `type`).
 * Timestamps are compared as instants (any offset), other values as given (callers pass them normalised).
 */
export const filterDigest = (
  binding: Readonly<Record<string, string | undefined>>,
  also: Readonly<Record<string, string | undefined>>
): string | null => {
  if (Object.values(binding).every((value) => value === undefined)) return null
  const all = { ...binding, ...also }
  const canonical = Object.keys(all).sort().map((name) => [name, all[name] ?? null])
  return createHash("sha256").update(JSON.stringify(canonical)).digest("base64url").slice(0, 16)
}

/** A timestamp filter as an instant, for `filterDigest`. */
export const instantOf = (timestamp: string | undefined): string | undefined =>
  timestamp === undefined ? undefined : new Date(timestamp).toISOString()

/** Keyset cursor: the (createdAt, id) of the last item, and the list's filter digest if it has one; opaque to clients. */
const encodeCursor = (digest: string | null) => (row: KeysetRow): string =>
  Buffer.from(
    JSON.stringify({ t: row.created_at.toISOString(), id: row.id, ...(digest === null ? {} : { f: digest }) })
  ).toString("base64url")

/** Position cursor: the position of the last item (and the list's filter digest); opaque to clients. */
const encodePositionCursor = (digest: string | null) => (row: PositionedRow): string =>
  Buffer.from(JSON.stringify({ p: row.position, ...(digest === null ? {} : { f: digest }) })).toString("base64url")

const notACursor = () =>
  Effect.fail(new BadRequest({ error: "cursor: not a cursor returned by this API (pass nextCursor unchanged)" }))

const otherFilters = () =>
  Effect.fail(
    new BadRequest({
      error:
        "cursor: returned for a list with other filters; pass it with the same filters (createdFrom included) as the request that returned it, or start again without a cursor"
    })
  )

const cursorText = (cursor: string) => Buffer.from(cursor, "base64url").toString("utf8")

/** Where a decoded cursor resumes, and the filter digest of the list that returned it (null: an unfiltered list). */
interface Decoded<After> {
  readonly after: After
  readonly digest: string | null
}

/** A cursor is input like any other: anything but one this API returned is a 400, never a query. */
const decodeCursor = (cursor: string): Effect.Effect<Decoded<{ createdAt: Date; id: string }>, BadRequest> =>
  Exit.match(decodeCursorJson(cursorText(cursor)), {
    onFailure: notACursor,
    onSuccess: ({ f, id, t }) => Effect.succeed({ after: { createdAt: new Date(t), id }, digest: f ?? null })
  })

/** Where a position-ordered page starts: after a position, or after the (createdAt, id) of a keyset cursor. */
export type PositionAfter =
  | { readonly _tag: "Position"; readonly position: string }
  | { readonly _tag: "Keyset"; readonly createdAt: Date; readonly id: string }

/**
 * A position cursor, or a keyset one: the events list was ordered by (createdAt, id) before it was by position, and
 * a partner may still hold a cursor from then.
 */
const decodePositionCursor = (cursor: string): Effect.Effect<Decoded<PositionAfter>, BadRequest> => {
  const text = cursorText(cursor)
  return Exit.match(decodePositionCursorJson(text), {
    onFailure: () =>
      Effect.map(decodeCursor(cursor), ({ after, digest }) => ({
        after: { _tag: "Keyset", ...after } satisfies PositionAfter,
        digest
      })),
    onSuccess: ({ f, p }) =>
      Effect.succeed({ after: { _tag: "Position", position: p } satisfies PositionAfter, digest: f ?? null })
  })
}

const DEFAULT_PAGE_SIZE = 50

/** The rows a page fetches: one more than it answers, to know whether another page follows. */
export const rowsFetched = (limit: number | undefined) => (limit ?? DEFAULT_PAGE_SIZE) + 1

export interface ListRequest {
  readonly integrationId: IntegrationId
  readonly createdFrom: string | undefined
  /** Exclusive upper bound on creation time; must be later than `createdFrom`. */
  readonly createdTo?: string | undefined
  readonly limit: number | undefined
  readonly cursor: string | undefined
  /** The list's `filterDigest`: its cursors carry it, and a cursor is taken only by a list with the same one. */
  readonly filterDigest?: string | null
}

/** What a page's query receives besides its filters of its own. */
export interface PageQuery<After> {
  readonly integrationId: IntegrationId
  readonly createdFrom: Date | null
  readonly createdTo: Date | null
  readonly after: After | null
  readonly limit: number
}

/** A page fetched with one row more than it answers: the items, and the cursor of the next page when one follows. */
const pageOf = <Row, After, Item, E, R>(
  request: ListRequest,
  decode: (cursor: string) => Effect.Effect<Decoded<After>, BadRequest>,
  encode: (digest: string | null) => (row: Row) => string,
  fetch: (page: PageQuery<After>) => Effect.Effect<ReadonlyArray<Row>, E, R>,
  present: (row: Row) => Item
) =>
  Effect.gen(function*() {
    const limit = request.limit ?? DEFAULT_PAGE_SIZE
    const digest = request.filterDigest ?? null
    const decoded = request.cursor === undefined ? null : yield* decode(request.cursor)
    if (decoded !== null && decoded.digest !== digest) return yield* otherFilters()
    const createdFrom = request.createdFrom === undefined ? null : new Date(request.createdFrom)
    const createdTo = request.createdTo === undefined ? null : new Date(request.createdTo)
    if (createdFrom !== null && createdTo !== null && createdTo.getTime() <= createdFrom.getTime()) {
      return yield* Effect.fail(new BadRequest({ error: "createdTo: must be later than createdFrom" }))
    }
    const rows = yield* fetch({
      integrationId: request.integrationId,
      createdFrom,
      createdTo,
      after: decoded === null ? null : decoded.after,
      limit: rowsFetched(limit)
    })
    const items = rows.slice(0, limit)
    const last = items[items.length - 1]
    return {
      integrationId: request.integrationId,
      items: items.map(present),
      nextCursor: rows.length > limit && last !== undefined ? encode(digest)(last) : null
    }
  })

/**
 * One keyset page of an integration's resources, ordered by (createdAt, id): fetches one row more than the page to
 * know whether another page follows, and answers `{ integrationId, items, nextCursor }`.
 */
export const keysetPage = <Row extends KeysetRow, Item, E, R>(
  request: ListRequest,
  fetch: (
    page: PageQuery<{ readonly createdAt: Date; readonly id: string }>
  ) => Effect.Effect<ReadonlyArray<Row>, E, R>,
  present: (row: Row) => Item
) => pageOf(request, decodeCursor, encodeCursor, fetch, present)

/**
 * One page of a list ordered by a position (the events list): as `keysetPage`, its cursor carrying the last item's
 * position; a keyset cursor is still understood (see `decodePositionCursor`).
 */
export const positionPage = <Row extends PositionedRow, Item, E, R>(
  request: ListRequest,
  fetch: (page: PageQuery<PositionAfter>) => Effect.Effect<ReadonlyArray<Row>, E, R>,
  present: (row: Row) => Item
) => pageOf(request, decodePositionCursor, encodePositionCursor, fetch, present)
