import { SqlClient } from "effect/sql"
import {
  type AdvancePayoutRequest,
  BadRequest,
  Conflict,
  type IntegrationId,
  type KnownFailureCode,
  NotFound,
  type PayoutId,
  type SwapId
} from "@cop-integrations/contracts"
import { Effect, Layer, Option } from "effect"
import { getAddress } from "viem"
import { now } from "../base/Clock.ts"
import { AppConfig } from "../config/Config.ts"
import { CustomerRepo } from "../kyc/CustomerRepo.ts"
import { Lifecycle, stepsForProgress } from "../payouts/Lifecycle.ts"
import { PayoutRepo } from "../payouts/PayoutRepo.ts"
import { PayoutChainId, presentPayout } from "../payouts/Present.ts"
import { mockRefundTxHash } from "../provider/mock/ProviderMock.ts"
import { noProgress, type TransferProgress } from "../provider/TransferProgress.ts"
import { presentSwap } from "../swaps/Present.ts"
import { SwapRepo } from "../swaps/SwapRepo.ts"
import { TestHelpers } from "./TestHelpers.ts"
import { makeTriggerEvent } from "./TriggerEvent.ts"

/**
 * Whether the provider's report of each target status says the funds reached it: the helper speaks as the provider's
 * callback would (a failure before any funds, like a transfer that errored; a refund of funds that arrived).
 */
const fundsArrivedAt = { processing: true, completed: true, failed: false, refunded: true } as const

/** The failure a move to `failed` or `refunded` records unless the caller names one. */
const defaultFailureCode: Record<AdvancePayoutRequest["to"], KnownFailureCode | null> = {
  processing: null,
  completed: null,
  failed: "provider_error",
  refunded: "returned_by_bank"
}

/** Just before `at`: a deadline moved there has passed by the time a sweep runs at `at`. */
const justBefore = (at: Date) => new Date(at.getTime() - 1)

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

    const swaps = yield* SwapRepo
    const config = yield* AppConfig

    const advancePayout = (integrationId: IntegrationId, payoutId: PayoutId, request: AdvancePayoutRequest) =>
      Effect.gen(function*() {
        const { failureCode, to } = request
        const failureCodeFor = defaultFailureCode[to]
        if (failureCode !== undefined && failureCodeFor === null) {
          return yield* Effect.fail(
            new BadRequest({ error: `failureCode: only with to "failed" or "refunded" (not "${to}")` })
          )
        }
        const found = yield* payouts.lockOwned(integrationId, payoutId)
        if (Option.isNone(found)) return yield* Effect.fail(new NotFound({ error: `no payout ${payoutId}` }))
        const from = found.value.status
        const progress: TransferProgress = {
          ...noProgress(found.value.provider_transfer_id),
          status: to,
          fundsArrived: fundsArrivedAt[to],
          failureCode: failureCode ?? failureCodeFor,
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

    const payoutNow = (integrationId: IntegrationId, payoutId: PayoutId) =>
      Effect.map(payouts.findOwned(integrationId, payoutId), (row) => presentPayout(Option.getOrThrow(row), chainId))

    /** A move in time the resource's status does not allow: 404 if it is not the caller's, else 409 with `rule`. */
    const refuse = (found: Option.Option<{ readonly status: string }>, what: string, rule: string) =>
      Option.match(found, {
        onNone: () => Effect.fail(new NotFound({ error: `no ${what}` })),
        onSome: ({ status }) => Effect.fail(new Conflict({ error: `${what} is ${status}: ${rule}` }))
      })

    // The same repository steps the worker's sweeps run (src/worker/JobWorker.ts, DelaySweep.ts), after moving the
    // resource's clock; the sweep sees it exactly as it would a resource whose time had come.
    const expirePayout = (integrationId: IntegrationId, payoutId: PayoutId) =>
      Effect.gen(function*() {
        const at = yield* now
        const moved = yield* payouts.closeWindow(integrationId, payoutId, justBefore(at))
        if (Option.isNone(moved)) {
          const found = yield* payouts.findOwned(integrationId, payoutId)
          return yield* refuse(found, `payout ${payoutId}`, "only a payout awaiting its deposit expires")
        }
        yield* payouts.expireOverdue(at)
        return yield* payoutNow(integrationId, payoutId)
      }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))

    const delayPayout = (integrationId: IntegrationId, payoutId: PayoutId) =>
      Effect.gen(function*() {
        const at = yield* now
        const cutoff = new Date(at.getTime() - config.payoutDelayedAfterMinutes * 60_000)
        const moved = yield* payouts.backdateUnchanged(integrationId, payoutId, justBefore(cutoff))
        if (Option.isNone(moved)) {
          const found = yield* payouts.findOwned(integrationId, payoutId)
          return yield* refuse(
            found,
            `payout ${payoutId}`,
            "only a payout in deposit_confirmed or processing, never reported delayed, is delayed"
          )
        }
        yield* payouts.markDelayed(at, cutoff)
        return yield* payoutNow(integrationId, payoutId)
      }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))

    const expireSwap = (integrationId: IntegrationId, swapId: SwapId) =>
      Effect.gen(function*() {
        const at = yield* now
        const moved = yield* swaps.closeWindow(integrationId, swapId, justBefore(at))
        if (Option.isNone(moved)) {
          const found = yield* swaps.findOwned(integrationId, swapId)
          return yield* refuse(found, `swap ${swapId}`, "only a prepared swap expires")
        }
        yield* swaps.expireOverdue(at)
        return presentSwap(Option.getOrThrow(yield* swaps.findOwned(integrationId, swapId)))
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

    const drivers = { advancePayout, expirePayout, delayPayout, expireSwap, rejectKyc }
    const triggerEvent = yield* makeTriggerEvent(drivers)
    return { served: true, ...drivers, triggerEvent }
  })
)
