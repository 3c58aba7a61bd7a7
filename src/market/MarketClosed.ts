import { docsPointer, MercadoCerrado } from "@cop-integrations/contracts"
import { Effect } from "effect"
import { now } from "../base/Clock.ts"
import { setRetryAfter } from "../base/ResponseHints.ts"

/**
 * 409 `mercado_cerrado` for a closed market. When the next opening is known, the message names it and `Retry-After`
 * carries the seconds until then, so a partner retries when a price can be taken again.
 */
export const marketClosed = (reopensAt: Date | undefined) =>
  Effect.gen(function*() {
    if (reopensAt !== undefined) {
      yield* setRetryAfter((reopensAt.getTime() - (yield* now).getTime()) / 1000)
    }
    const when = reopensAt === undefined ? "" : `, at ${reopensAt.toISOString()}`
    return yield* Effect.fail(
      new MercadoCerrado({
        error: `the USD/COP market is closed; quotes and payouts resume when it opens${when} (see ${
          docsPointer("mercado_cerrado")
        })`
      })
    )
  })
