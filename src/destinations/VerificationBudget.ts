import { SqlClient, SqlSchema } from "effect/sql"
import { IntegrationId } from "@cop-integrations/contracts"
import { Context, Effect, Layer, Option, Schema } from "effect"
import { tooManyRequests } from "../base/ResponseHints.ts"

/** Destination verifications an integration may ask for a minute, and at once (the mode's default or the setting). */
export class VerificationsPerMinute
  extends Context.Service<VerificationsPerMinute, number>()("VerificationsPerMinute")
{}

const Taken = Schema.Struct({ integration_id: IntegrationId })
const Wait = Schema.Struct({ wait_seconds: Schema.Number })

/**
 * The budget of destination verifications an integration may ask the provider for (a verification tells whether a
 * holder name matches a Bre-B key, and the holder's data: unlimited, it would be a directory lookup). One token
 * bucket per integration, `VerificationsPerMinute` tokens, refilling one every `60 / limit` seconds, in the
 * database so every replica spends the same budget; times are the database's clock, the same for every replica.
 *
 * The bucket is kept as the time it is full again (`full_at`; a generic cell rate algorithm): a verification is
 * allowed while `full_at` is at most `limit - 1` tokens' time ahead, and moves it one token's time on from
 * `max(full_at, now)`. So taking is one statement that reads, checks and writes under the row's lock, whatever
 * the number of replicas; a refusal writes nothing.
 */
export class VerificationBudget extends Context.Service<VerificationBudget>()("VerificationBudget", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const limit = yield* VerificationsPerMinute
    const tokenSeconds = 60 / limit
    const aheadAtMost = (limit - 1) * tokenSeconds

    const takeToken = SqlSchema.findOneOption({
      Request: IntegrationId,
      Result: Taken,
      execute: (integrationId) =>
        sql`INSERT INTO destination_verification_budgets AS budget (integration_id, full_at)
            VALUES (${integrationId}, statement_timestamp() + ${tokenSeconds} * interval '1 second')
            ON CONFLICT (integration_id) DO UPDATE
              SET full_at = GREATEST(budget.full_at, statement_timestamp()) + ${tokenSeconds} * interval '1 second'
              WHERE budget.full_at <= statement_timestamp() + ${aheadAtMost} * interval '1 second'
            RETURNING budget.integration_id`
    })

    /** Until the next token, after a refusal. */
    const waitForToken = SqlSchema.findOneOption({
      Request: IntegrationId,
      Result: Wait,
      execute: (integrationId) =>
        sql`SELECT (EXTRACT(EPOCH FROM full_at - statement_timestamp()) - ${aheadAtMost})::float8 AS wait_seconds
            FROM destination_verification_budgets WHERE integration_id = ${integrationId}`
    })

    const giveBack = SqlSchema.void({
      Request: IntegrationId,
      execute: (integrationId) =>
        sql`UPDATE destination_verification_budgets SET full_at = full_at - ${tokenSeconds} * interval '1 second'
            WHERE integration_id = ${integrationId}`
    })

    /** Takes a token, or fails with the 429 (Retry-After: until the next token). */
    const take = (integrationId: IntegrationId) =>
      Effect.gen(function*() {
        if (Option.isSome(yield* Effect.orDie(takeToken(integrationId)))) return
        const wait = yield* Effect.orDie(waitForToken(integrationId))
        return yield* tooManyRequests(
          "destination_verifications",
          `destination verifications are limited to ${limit} a minute per integration (previews, and payouts without a previewId, alike); retry later`,
          Option.match(wait, { onNone: () => tokenSeconds, onSome: (row) => row.wait_seconds })
        )
      })

    /** Gives back the token of a verification the provider did not answer. Best effort: a failure is only logged. */
    const refund = (integrationId: IntegrationId) =>
      giveBack(integrationId).pipe(
        Effect.ignoreCause({ log: "Warn", message: "a destination verification's token could not be given back" })
      )

    /**
     * Runs `verify` (the provider's verification) on a token of the integration's budget: 429 without calling it
     * when none is left; the token is given back when `verify` fails or is interrupted (nothing was verified).
     */
    const spending = <A, E, R>(integrationId: IntegrationId, verify: Effect.Effect<A, E, R>) =>
      Effect.andThen(take(integrationId), Effect.onError(verify, () => refund(integrationId)))

    return { spending } as const
  })
}) {
  static readonly Default = Layer.effect(this, this.make)
}
