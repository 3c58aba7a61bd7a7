import { BadGateway, ServiceUnavailable } from "@cop-integrations/contracts"
import { Effect } from "effect"
import type { ProviderFailure } from "./PayoutProvider.ts"

/** A provider failure as the partner sees it: 503 when it may pass on retry, 502 when its answer was unreadable. */
export const providerFailure = (error: ProviderFailure): Effect.Effect<never, ServiceUnavailable | BadGateway> =>
  error._tag === "ProviderUnavailable"
    ? Effect.fail(new ServiceUnavailable({ error: `payout provider unavailable: ${error.reason}; retry later` }))
    : Effect.fail(
      new BadGateway({ error: "the payout provider answered unexpectedly; retry later or contact support" })
    )

/**
 * Maps both provider failures of `effect` to their HTTP errors. The casts name the error channel before and after:
 * TypeScript cannot narrow a generic `E | ProviderFailure` by tag.
 */
export const orProviderFailure = <A, E, R>(effect: Effect.Effect<A, E | ProviderFailure, R>) =>
  Effect.catchTags(effect as Effect.Effect<A, ProviderFailure, R>, {
    ProviderUnavailable: providerFailure,
    ProviderBadResponse: providerFailure
  }) as Effect.Effect<A, Exclude<E, ProviderFailure> | ServiceUnavailable | BadGateway, R>
