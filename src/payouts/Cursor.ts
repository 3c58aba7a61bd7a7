import { BadRequest } from "@cop-integrations/contracts"
import { Effect, Either, Schema } from "effect"
import type { PayoutRow } from "./PayoutRow.ts"

const CursorJson = Schema.parseJson(Schema.Struct({ t: Schema.String, id: Schema.String }))

/** Keyset cursor: the (createdAt, payoutId) of the last item, opaque to clients. */
export const encodeCursor = (row: Pick<PayoutRow, "created_at" | "id">): string =>
  Buffer.from(JSON.stringify({ t: row.created_at.toISOString(), id: row.id })).toString("base64url")

export const decodeCursor = (cursor: string) =>
  Either.match(Schema.decodeUnknownEither(CursorJson)(Buffer.from(cursor, "base64url").toString("utf8")), {
    onLeft: () => Effect.fail(new BadRequest({ error: "cursor: not a cursor returned by this API" })),
    onRight: ({ id, t }) => {
      const createdAt = new Date(t)
      return Number.isNaN(createdAt.getTime())
        ? Effect.fail(new BadRequest({ error: "cursor: not a cursor returned by this API" }))
        : Effect.succeed({ createdAt, id })
    }
  })
