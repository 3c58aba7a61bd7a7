import { TxHash } from "@cop-integrations/contracts"
import { Effect, Layer } from "effect"
import { getAddress, keccak256, toHex } from "viem"
import { isScenario } from "../../base/MockScenario.ts"
import { AppConfig } from "../../config/Config.ts"
import { PayoutProvider, ProviderUnavailable } from "../PayoutProvider.ts"
import { noProgress } from "../TransferProgress.ts"

/** Under `X-Mock-Scenario: provider_unavailable` the provider cannot be reached. */
export const unlessUnavailable = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.andThen(
    Effect.flatMap(isScenario("provider_unavailable"), (down) =>
      down ? Effect.fail(new ProviderUnavailable({ reason: "mock scenario provider_unavailable" })) : Effect.void),
    effect
  )

const deterministicAddress = (seed: string): `0x${string}` => getAddress(`0x${keccak256(toHex(seed)).slice(-40)}`)

/** The transaction of the mock provider's refund of a payout's deposit: one per payout, derived from it. */
export const mockRefundTxHash = (payoutId: string) => TxHash.make(keccak256(toHex(`refund:${payoutId}`)))

/** The mock's transfer for a payout: one per payout, named after it. */
export const mockTransferId = (payoutId: string) => `tr_mock_${payoutId}`

/**
 * Deterministic provider: configured rates, `mismatch` names fail verification, transfers get derived addresses.
 * A transfer's progress once the deposit is in is TransferLifecycleMock's.
 */
export const ProviderMock = Layer.effect(
  PayoutProvider,
  Effect.gen(function*() {
    const config = yield* AppConfig
    return PayoutProvider.of({
      destinationsPerCustomer: false,
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
          transferId: mockTransferId(payoutId),
          chain: config.chainName,
          currency: "usdc",
          depositAddress: deterministicAddress(`deposit:${payoutId}`),
          depositAmount: amount
        })),
      cancelTransfer: () => unlessUnavailable(Effect.void),
      // The mock's KYC links start approved, so a customer still undecided was not decided by the mock (a provider
      // webhook or a test decides it): the mock has no newer word, as it has none on its transfers.
      getCustomerKyc: () => unlessUnavailable(Effect.succeed("pending")),
      // The mock's transfers progress through scheduled jobs, never by polling: nothing to reconcile.
      getTransfer: (transferId) => Effect.succeed(noProgress(transferId))
    })
  })
)
