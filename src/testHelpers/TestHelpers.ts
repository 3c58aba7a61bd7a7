import type {
  AdvancePayoutRequest,
  Conflict,
  IntegrationId,
  KycCustomer,
  Payout,
  PayoutId
} from "@cop-integrations/contracts"
import { NotFound } from "@cop-integrations/contracts"
import { Context, Effect, Layer } from "effect"

/** Sandbox controls: produce every payout and KYC outcome on demand (mock mode); a live deployment has none. */
export class TestHelpers extends Context.Service<TestHelpers, {
  /** False in a live deployment: nothing under the helpers' path is served (src/http/TestHelpersHttp.ts). */
  readonly served: boolean
  readonly advancePayout: (
    integrationId: IntegrationId,
    payoutId: PayoutId,
    to: AdvancePayoutRequest["to"]
  ) => Effect.Effect<Payout, NotFound | Conflict>
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
  rejectKyc: () => absent
})
