import { Context, Effect, Option } from "effect"

/**
 * Per-request notes from handlers to the outer middleware, for headers that typed error responses
 * cannot carry (`Retry-After` on 429s).
 */
export class ResponseHints extends Context.Tag("ResponseHints")<ResponseHints, { retryAfterSeconds: number | undefined }>() {}

export const setRetryAfter = (seconds: number) =>
  Effect.map(Effect.serviceOption(ResponseHints), Option.map((hints) => {
    hints.retryAfterSeconds = Math.max(1, Math.ceil(seconds))
  }))
