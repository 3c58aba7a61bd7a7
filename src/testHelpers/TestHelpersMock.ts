import { SqlClient } from "effect/sql"
import { Conflict, type IntegrationId, NotFound, type PayoutId } from "@cop-integrations/contracts"
import { Effect, Layer, Option } from "effect"
import { getAddress } from "viem"
import { now } from "../base/Clock.ts"
import { CustomerRepo } from "../kyc/CustomerRepo.ts"
import { Lifecycle, stepsForProgress } from "../payouts/Lifecycle.ts"
import { PayoutRepo } from "../payouts/PayoutRepo.ts"
import { PayoutChainId, presentPayout } from "../payouts/Present.ts"
import { mockRefundTxHash } from "../provider/mock/ProviderMock.ts"
import { noProgress, type TransferProgress } from "../provider/TransferProgress.ts"
import { TestHelpers } from "./TestHelpers.ts"

/**
 * Whether the provider's report of each target status says the funds reached it: the helper speaks as the provider's
 * callback would (a failure before any funds, like a transfer that errored; a refund of funds that arrived).
 */
const fundsArrivedAt = { processing: true, completed: true, failed: false, refunded: true } as const

/**
 * Mock mode's test helpers. They change nothing themselves: a payout moves through `Lifecycle.applyTransferProgress`
 * and a KYC through `CustomerRepo.applyProviderKyc`, exactly as a provider webhook would move them, so the same
 * state machine decides and the same events are written.
 */
export const TestHelpersMock = Layer.effect(
  TestHelpers,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const payouts = yield* PayoutRepo
    const customers = yield* CustomerRepo
    const lifecycle = yield* Lifecycle
    const chainId = yield* PayoutChainId

    const advancePayout = (integrationId: IntegrationId, payoutId: PayoutId, to: keyof typeof fundsArrivedAt) =>
      Effect.gen(function*() {
        const found = yield* payouts.lockOwned(integrationId, payoutId)
        if (Option.isNone(found)) return yield* Effect.fail(new NotFound({ error: `no payout ${payoutId}` }))
        const from = found.value.status
        const progress: TransferProgress = {
          ...noProgress(found.value.provider_transfer_id),
          status: to,
          fundsArrived: fundsArrivedAt[to],
          failureCode: to === "failed" ? "provider_error" : to === "refunded" ? "returned_by_bank" : null,
          // The mock provider returns the whole deposit at once, in a transaction of its own making.
          refund: to === "refunded" ? { amount: found.value.deposit_amount, txHash: mockRefundTxHash(payoutId) } : null
        }
        if (stepsForProgress(from, progress, (found.value.canceled_at ?? null) !== null).length === 0) {
          return yield* Effect.fail(
            new Conflict({ error: `payout ${payoutId} cannot move from ${from} to ${to} (statuses only move forward)` })
          )
        }
        yield* lifecycle.applyTransferProgress({ progress, source: "test_helper" })
        const moved = yield* payouts.findOwned(integrationId, payoutId)
        return presentPayout(Option.getOrThrow(moved), chainId)
      }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))

    const rejectKyc = (integrationId: IntegrationId, userAddress: string) =>
      Effect.gen(function*() {
        const found = yield* customers.find({ integrationId, userAddress })
        if (Option.isNone(found)) return yield* Effect.fail(new NotFound({ error: `no customer ${userAddress}` }))
        const providerCustomerId = found.value.provider_customer_id
        if (providerCustomerId === null) {
          return yield* Effect.fail(
            new Conflict({ error: `customer ${userAddress} has not started KYC (verify the OTP first)` })
          )
        }
        yield* customers.applyProviderKyc(providerCustomerId, "rejected", yield* now)
        const customer = Option.getOrThrow(yield* customers.find({ integrationId, userAddress }))
        return {
          userAddress: getAddress(customer.user_address),
          kycStatus: customer.kyc_status,
          kycUrl: customer.kyc_url
        }
      }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))

    return { served: true, advancePayout, rejectKyc }
  })
)
