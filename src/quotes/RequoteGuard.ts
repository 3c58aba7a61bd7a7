import type { Requote } from "@cop-integrations/contracts"
import { Context, Effect, Layer } from "effect"

/**
 * Reasons outside the service's own checks (quote expiry and tolerance, the deposit window) to send the partner
 * back for a new price. The provider's rates are indicative and it holds no price, so live has none.
 */
export class RequoteGuard extends Context.Service<RequoteGuard, {
  /** Before a payout is priced. */
  readonly beforePricing: Effect.Effect<void, Requote>
  /** Before a deposit is confirmed. */
  readonly beforeConfirm: Effect.Effect<void, Requote>
}>()("RequoteGuard") {}

export const RequoteGuardLive = Layer.succeed(
  RequoteGuard,
  RequoteGuard.of({ beforePricing: Effect.void, beforeConfirm: Effect.void })
)
