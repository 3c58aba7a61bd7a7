import { randomBytes } from "node:crypto"
import {
  Address,
  Conflict,
  type EventType,
  type IntegrationId,
  NotFound,
  type PayoutBatch,
  PayoutId,
  SwapId,
  type TriggeredEvent,
  TxHash
} from "@cop-integrations/contracts"
import { Effect, Option, Predicate } from "effect"
import { SqlClient } from "effect/sql"
import { getAddress } from "viem"
import { now } from "../base/Clock.ts"
import { OtpService } from "../kyc/OtpService.ts"
import { Outbox } from "../outbox/Outbox.ts"
import { DeliveryRepo } from "../partnerEvents/DeliveryRepo.ts"
import { AuditLog } from "../auth/AuditLog.ts"
import { disableEndpoint } from "../partnerEvents/EndpointDisabling.ts"
import { EventRepo } from "../partnerEvents/EventRepo.ts"
import { WebhookEndpoints } from "../partnerEvents/WebhookEndpoints.ts"
import { BatchConfirm } from "../payouts/BatchConfirm.ts"
import { PayoutBatches } from "../payouts/PayoutBatches.ts"
import { PayoutConfirm } from "../payouts/PayoutConfirm.ts"
import { PayoutService } from "../payouts/PayoutService.ts"
import { SwapRepo } from "../swaps/SwapRepo.ts"
import { SwapService } from "../swaps/SwapService.ts"
import type { TestHelpers, TriggerStepConflict } from "./TestHelpers.ts"

/** The helpers a trigger drives a resource with, after creating it through the partner's own operations. */
type Drivers = Pick<
  TestHelpers["Service"],
  "advancePayout" | "expirePayout" | "delayPayout" | "expireSwap" | "rejectKyc"
>

const freshAddress = () => Address.make(getAddress(`0x${randomBytes(20).toString("hex")}`))
const freshTxHash = () => TxHash.make(`0x${randomBytes(32).toString("hex")}`)

/**
 * Whatever a step failed with as the trigger's answer: a service's 404, 409 or refusal as it is, any other error (each
 * carries `error`) as the trigger's 409.
 */
const asConflict = (type: EventType) => <A, E extends { readonly _tag: string }, R>(self: Effect.Effect<A, E, R>) =>
  Effect.catchIf<A, E, R, Extract<E, { readonly error: string }>, never, NotFound | Conflict, never>(
    self,
    (failure): failure is Extract<E, { readonly error: string }> => Predicate.hasProperty(failure, "error"),
    (failure) =>
      Effect.fail(
        failure instanceof NotFound || failure instanceof Conflict
          ? failure
          : new Conflict({ error: `could not produce ${type}: ${failure.error}` })
      )
  )

/**
 * `POST test-helpers/events/trigger`: creates what an event of `type` needs in the caller's integration through the
 * same services the partner's requests use (OTP and KYC, payout create and confirm, swap prepare and confirm), drives
 * it with the test helpers (advance, the time helpers, reject) and answers the event it produced.
 */
export const makeTriggerEvent = (drivers: Drivers) =>
  Effect.gen(function*() {
    const otp = yield* OtpService
    const payouts = yield* PayoutService
    const confirms = yield* PayoutConfirm
    const batchService = yield* PayoutBatches
    const batchConfirms = yield* BatchConfirm
    const swapService = yield* SwapService
    const swaps = yield* SwapRepo
    const endpoints = yield* WebhookEndpoints
    const events = yield* EventRepo
    const deliveryRepo = yield* DeliveryRepo
    const outbox = yield* Outbox
    const audit = yield* AuditLog
    const sql = yield* SqlClient.SqlClient

    /** A new customer of the integration, KYC approved (the mock approves at the OTP's verification). */
    const approvedCustomer = (integrationId: IntegrationId) =>
      Effect.gen(function*() {
        const userAddress = freshAddress()
        const sent = yield* otp.send({ integrationId, userAddress, email: "sandbox@example.com" })
        if (sent.debugCode === undefined) {
          return yield* Effect.fail(new Conflict({ error: "this deployment does not reveal OTP codes" }))
        }
        yield* otp.verify({ integrationId, userAddress, code: sent.debugCode })
        return userAddress
      })

    const createdPayout = (integrationId: IntegrationId) =>
      Effect.gen(function*() {
        const userAddress = yield* approvedCustomer(integrationId)
        const created = yield* payouts.create({
          integrationId,
          request: { userAddress, destinationCop: "250000", breBKey: "@sandbox", accountOwnerName: "Ana Gomez" },
          idempotencyKey: undefined
        })
        return PayoutId.make((created.body as { readonly payoutId: string }).payoutId)
      })

    const depositedPayout = (integrationId: IntegrationId) =>
      Effect.tap(
        createdPayout(integrationId),
        (payoutId) => confirms.confirm({ integrationId, payoutId, request: { txHash: freshTxHash() } })
      )

    const preparedSwap = (integrationId: IntegrationId) =>
      Effect.map(
        swapService.create({
          integrationId,
          request: { userAddress: freshAddress(), fromToken: "USDC", toToken: "COPm", amountIn: "10" },
          idempotencyKey: undefined
        }),
        (created) => SwapId.make((created.body as { readonly intentId: string }).intentId)
      )

    /**
     * The mock chain never reverts a transaction, so a swap fails here as a reverted one would leave it (the
     * repository records `swap.failed` with the change).
     */
    const failedSwap = (integrationId: IntegrationId) =>
      Effect.gen(function*() {
        const swapId = yield* preparedSwap(integrationId)
        const row = Option.getOrThrow(yield* swaps.lockOwned(integrationId, swapId))
        yield* swaps.update({ ...row, status: "failed", tx_hash: freshTxHash(), updated_at: yield* now })
        return swapId
      })

    const pingedEndpoint = (integrationId: IntegrationId) =>
      Effect.gen(function*() {
        const { items } = yield* endpoints.list(integrationId)
        const enabled = items.find((endpoint) => endpoint.status === "enabled")
        if (enabled === undefined) {
          return yield* Effect.fail(
            new Conflict({ error: "endpoint.ping needs an enabled webhook endpoint: register one first" })
          )
        }
        yield* endpoints.ping(integrationId, enabled.endpointId)
        return enabled.endpointId
      })

    /** A batch of one payout, confirmed (the mock chain pays its every deposit); answers its id and its payout's. */
    const confirmedBatch = (integrationId: IntegrationId) =>
      Effect.gen(function*() {
        const userAddress = yield* approvedCustomer(integrationId)
        const created = yield* batchService.create({
          integrationId,
          request: {
            userAddress,
            items: [{ destinationCop: "250000", breBKey: "@sandbox", accountOwnerName: "Ana Gomez" }]
          },
          idempotencyKey: undefined
        })
        const batch = created.body as PayoutBatch
        yield* batchConfirms.confirm({ integrationId, batchId: batch.batchId, request: { txHash: freshTxHash() } })
        const payoutId = batch.items[0]?.payout?.payoutId
        if (payoutId === undefined) return yield* Effect.fail(new Conflict({ error: "the batch made no payout" }))
        return { batchId: batch.batchId, payoutId }
      })

    /**
     * An endpoint of its own (an address nothing answers), disabled as a receiver's 410 Gone disables one: the
     * integration's other endpoints hear `endpoint.disabled`.
     */
    const disabledEndpoint = (integrationId: IntegrationId) =>
      Effect.gen(function*() {
        const created = yield* endpoints.create(integrationId, {
          url: "http://127.0.0.1:9/gone",
          events: ["endpoint.ping"]
        })
        const at = yield* now
        yield* disableEndpoint(
          created.endpointId,
          `disabled ${at.toISOString()}: the receiver answered 410 Gone (sandbox trigger)`,
          at
        ).pipe(
          Effect.provideService(DeliveryRepo, deliveryRepo),
          Effect.provideService(Outbox, outbox),
          Effect.provideService(AuditLog, audit),
          sql.withTransaction,
          Effect.orDie
        )
        return created.endpointId
      })

    const advanced = (to: "processing" | "completed" | "failed" | "refunded") => (integrationId: IntegrationId) =>
      Effect.tap(depositedPayout(integrationId), (payoutId) => drivers.advancePayout(integrationId, payoutId, { to }))

    const produce = {
      "payout.created": createdPayout,
      "payout.deposit_confirmed": depositedPayout,
      "payout.processing": advanced("processing"),
      "payout.completed": advanced("completed"),
      "payout.failed": advanced("failed"),
      "payout.refunded": advanced("refunded"),
      "payout.expired": (integrationId) =>
        Effect.tap(createdPayout(integrationId), (payoutId) => drivers.expirePayout(integrationId, payoutId)),
      "payout.delayed": (integrationId) =>
        Effect.tap(depositedPayout(integrationId), (payoutId) => drivers.delayPayout(integrationId, payoutId)),
      "kyc.approved": (integrationId) =>
        Effect.map(approvedCustomer(integrationId), (address) => address.toLowerCase()),
      "kyc.rejected": (integrationId) =>
        Effect.map(
          Effect.tap(approvedCustomer(integrationId), (address) => drivers.rejectKyc(integrationId, address)),
          (address) => address.toLowerCase()
        ),
      "swap.confirmed": (integrationId) =>
        Effect.tap(
          preparedSwap(integrationId),
          (intentId) => swapService.confirm({ integrationId, intentId, request: { txHash: freshTxHash() } })
        ),
      "swap.failed": failedSwap,
      "swap.expired": (integrationId) =>
        Effect.tap(preparedSwap(integrationId), (intentId) => drivers.expireSwap(integrationId, intentId)),
      "endpoint.ping": pingedEndpoint,
      "endpoint.disabled": disabledEndpoint,
      "payout_batch.confirmed": (integrationId) => Effect.map(confirmedBatch(integrationId), ({ batchId }) => batchId),
      "payout_batch.finished": (integrationId) =>
        Effect.gen(function*() {
          const { batchId, payoutId } = yield* confirmedBatch(integrationId)
          yield* drivers.advancePayout(integrationId, payoutId, { to: "completed" })
          return batchId
        })
    } satisfies Record<EventType, (integrationId: IntegrationId) => Effect.Effect<string, unknown>>

    return (
      integrationId: IntegrationId,
      type: EventType
    ): Effect.Effect<TriggeredEvent, NotFound | Conflict | TriggerStepConflict> =>
      Effect.gen(function*() {
        const resourceId = yield* produce[type](integrationId)
        const event = yield* events.latestFor({ integrationId, resourceId, type })
        if (Option.isNone(event)) {
          return yield* Effect.fail(new Conflict({ error: `${resourceId} did not produce ${type}` }))
        }
        return { type, eventId: event.value.id, resourceId }
      }).pipe(asConflict(type))
  })
