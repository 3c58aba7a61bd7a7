import { Effect, Layer } from "effect"
import { getAddress, keccak256, toHex } from "viem"
import { addSeconds } from "../base/Clock.ts"
import { AppConfig } from "../config/Config.ts"
import { JobQueue } from "../work/JobQueue.ts"
import { isScenario } from "../base/MockScenario.ts"
import { PayoutProvider, ProviderUnavailable } from "./PayoutProvider.ts"

const unlessUnavailable = <A>(effect: Effect.Effect<A>) =>
  Effect.flatMap(isScenario("provider_unavailable"), (down) =>
    down
      ? Effect.fail(new ProviderUnavailable({ reason: "mock scenario provider_unavailable" }))
      : effect)

const deterministicAddress = (seed: string): `0x${string}` =>
  getAddress(`0x${keccak256(toHex(seed)).slice(-40)}`)

/**
 * Deterministic provider: configured rates, `mismatch` names fail verification, transfers get derived addresses,
 * and a confirmed deposit's transfer progresses on its own (jobs applied like the provider's webhooks).
 */
export const ProviderMock = Layer.effect(
  PayoutProvider,
  Effect.gen(function*() {
    const config = yield* AppConfig
    const jobs = yield* JobQueue
    const step = config.mockLifecycleDelayMs / 1000
    return PayoutProvider.of({
      usdCopRates: unlessUnavailable(Effect.succeed({ sellRate: config.mockSellRate, midRate: config.mockMidRate })),
      createKycLink: ({ idempotencyKey }) =>
        unlessUnavailable(Effect.succeed({
          customerId: `cus_mock_${keccak256(toHex(idempotencyKey)).slice(2, 18)}`,
          kycStatus: "approved",
          kycUrl: null
        })),
      createExternalAccount: ({ accountOwnerName, breBKey }) =>
        unlessUnavailable(Effect.succeed(
          accountOwnerName.toLowerCase().includes("mismatch")
            ? { _tag: "OwnerMismatch" as const }
            : {
              _tag: "Verified" as const,
              accountOwnerName: accountOwnerName.trim(),
              bankName: "Banco de Pruebas",
              documentLast4: /^[0-9]{5,15}$/.test(breBKey) ? breBKey.slice(-4) : null,
              externalAccountId: `ea_mock_${keccak256(toHex(breBKey)).slice(2, 18)}`
            }
        )),
      createTransfer: ({ amount, payoutId }) =>
        unlessUnavailable(Effect.succeed({
          transferId: `tr_mock_${payoutId}`,
          chain: config.chainName,
          currency: "usdc",
          depositAddress: deterministicAddress(`deposit:${payoutId}`),
          depositAmount: amount
        })),
      // The mock's transfers progress through scheduled jobs, never by polling: nothing to reconcile.
      getTransfer: (transferId) => Effect.succeed({ transferId, state: "awaiting_funds", finalAmountCop: null }),
      depositConfirmed: ({ at, transferId }) =>
        Effect.zipRight(
          jobs.enqueue({ _tag: "ProviderTransferState", transferId, state: "payment_submitted" }, addSeconds(at, step)),
          jobs.enqueue({ _tag: "ProviderTransferState", transferId, state: "payment_processed" }, addSeconds(at, 2 * step))
        )
    })
  })
)
