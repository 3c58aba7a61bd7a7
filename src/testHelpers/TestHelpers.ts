import type { AdvancePayoutRequest, Conflict, KycCustomer, Payout } from "@cop-integrations/contracts"
import { NotFound } from "@cop-integrations/contracts"
import { Context, Effect, Layer } from "effect"

/** Sandbox controls: produce every payout and KYC outcome on demand (mock mode); a live deployment has none. */
export class TestHelpers extends Context.Tag("TestHelpers")<TestHelpers, {
  readonly advancePayout: (
    integrationId: string,
    payoutId: string,
    to: AdvancePayoutRequest["to"]
  ) => Effect.Effect<Payout, NotFound | Conflict>
  readonly rejectKyc: (integrationId: string, userAddress: string) => Effect.Effect<KycCustomer, NotFound | Conflict>
}>() {}

const absent = Effect.fail(new NotFound({ error: "test helpers exist only in mock (sandbox) deployments" }))

/** Live mode: every test helper is a 404, as if the route did not exist. */
export const TestHelpersNone = Layer.succeed(TestHelpers, { advancePayout: () => absent, rejectKyc: () => absent })
