import { BadGateway, ServiceUnavailable } from "@cop-integrations/contracts"
import { Effect } from "effect"
import { setRetryAfter } from "../http/ResponseHints.ts"
import type { ProviderFailure } from "./PayoutProvider.ts"

/**
 * The `Retry-After` of the provider's 503. The call that failed already spent PROVIDER_TIMEOUT_MS on its tries, so
 * a partner should not come back at once; a few seconds lets a brief outage pass without keeping a user waiting.
 */
export const PROVIDER_RETRY_AFTER_SECONDS = 5

/** A provider failure as the partner sees it: 503 when it may pass on retry, 502 when its answer was unreadable. */
export const providerFailure = (error: ProviderFailure): Effect.Effect<never, ServiceUnavailable | BadGateway> =>
  error._tag === "ProviderUnavailable"
    ? Effect.zipRight(
      setRetryAfter(PROVIDER_RETRY_AFTER_SECONDS),
      Effect.fail(new ServiceUnavailable({ error: `payout provider unavailable: ${error.reason}; retry later` }))
    )
    : Effect.fail(new BadGateway({ error: "the payout provider answered unexpectedly; retry later or contact support" }))

/** Maps both provider failures of `effect` to their HTTP errors. */
export const orProviderFailure = <A, E, R>(effect: Effect.Effect<A, E | ProviderFailure, R>) =>
  Effect.catchTags(effect as Effect.Effect<A, ProviderFailure, R>, {
    ProviderUnavailable: providerFailure,
    ProviderBadResponse: providerFailure
  }) as Effect.Effect<A, Exclude<E, ProviderFailure> | ServiceUnavailable | BadGateway, R>
