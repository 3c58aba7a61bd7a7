import type {
  AdvancePayoutRequest,
  BadRequest,
  Conflict,
  IntegrationId,
  KycCustomer,
  Payout,
  PayoutId,
  EventType,
  SwapId,
  SwapIntent,
  TriggeredEvent
} from "@cop-integrations/contracts"
import { NotFound } from "@cop-integrations/contracts"
import { Context, Effect, Layer } from "effect"
import type { IdempotencyKeyInProgress } from "../idempotency/IdempotencyStore.ts"
import type { WebhookEndpointConflict } from "../partnerEvents/WebhookEndpoints.ts"
import type { BatchConfirmConflict } from "../payouts/BatchConfirm.ts"
import type { PayoutConfirmConflict } from "../payouts/PayoutConfirm.ts"
import type { NoSwapRoute } from "../router/SwapRouter.ts"
import type { SwapConflict } from "../swaps/SwapService.ts"

/**
 * A service's refusal met while producing an event: answered as the partner's own request would be (the HTTP edge
 * writes its 409).
 */
export type TriggerStepConflict =
  | PayoutConfirmConflict
  | BatchConfirmConflict
  | SwapConflict
  | WebhookEndpointConflict
  | NoSwapRoute
  | IdempotencyKeyInProgress

/** Sandbox controls: produce every payout and KYC outcome on demand (mock mode); a live deployment has none. */
export class TestHelpers extends Context.Service<TestHelpers, {
  /** False in a live deployment: nothing under the helpers' path is served (src/http/TestHelpersHttp.ts). */
  readonly served: boolean
  readonly advancePayout: (
    integrationId: IntegrationId,
    payoutId: PayoutId,
    request: AdvancePayoutRequest
  ) => Effect.Effect<Payout, BadRequest | NotFound | Conflict>
  /** Time travel: the deposit window closed now, and the expiry sweep run (`payout.expired`). */
  readonly expirePayout: (
    integrationId: IntegrationId,
    payoutId: PayoutId
  ) => Effect.Effect<Payout, NotFound | Conflict>
  /** Time travel: unchanged past the delay threshold, and the delay sweep run (`payout.delayed`). */
  readonly delayPayout: (integrationId: IntegrationId, payoutId: PayoutId) => Effect.Effect<Payout, NotFound | Conflict>
  /** Time travel: the swap's quote expired now, and the expiry sweep run (`swap.expired`). */
  readonly expireSwap: (integrationId: IntegrationId, swapId: SwapId) => Effect.Effect<SwapIntent, NotFound | Conflict>
  /** One event of `type`, produced from resources made for it in the integration (like `stripe trigger`). */
  readonly triggerEvent: (
    integrationId: IntegrationId,
    type: EventType
  ) => Effect.Effect<TriggeredEvent, NotFound | Conflict | TriggerStepConflict>
  readonly rejectKyc: (
    integrationId: IntegrationId,
    userAddress: string
  ) => Effect.Effect<KycCustomer, NotFound | Conflict>
}>()("TestHelpers") {}

export const TEST_HELPERS_ABSENT = "test helpers exist only in mock (sandbox) deployments"

const absent = Effect.fail(new NotFound({ error: TEST_HELPERS_ABSENT }))

/** Live mode: every test helper is a 404, as if the route did not exist. */
export const TestHelpersNone = Layer.succeed(TestHelpers, {
  served: false,
  advancePayout: () => absent,
  expirePayout: () => absent,
  delayPayout: () => absent,
  expireSwap: () => absent,
  triggerEvent: () => absent,
  rejectKyc: () => absent
})
