/**
 * The one place the services' refusals (409s) become the contract's `Conflict`: each service names what went wrong
 * as a tagged error of its own, and the partner reads the same `{ error }` body for every one, its text written here.
 */
import { Conflict } from "@cop-integrations/contracts"
import { Effect, Predicate } from "effect"
import type { ConfirmReleased, ConfirmStillVerifying } from "../chain/ConfirmByTxHash.ts"
import type { DepositNotMined, DepositRefused } from "../chain/Verification.ts"
import type { IdempotencyKeyInProgress } from "../idempotency/IdempotencyStore.ts"
import type { WebhookEndpointDisabled, WebhookEndpointLimit } from "../partnerEvents/WebhookEndpoints.ts"
import type { PayoutBatchAlreadyConfirmed, PayoutBatchConfirmInProgress } from "../payouts/BatchConfirm.ts"
import type { PayoutNotCancelable } from "../payouts/PayoutCancel.ts"
import type { PayoutAlreadyConfirmed, PayoutConfirmInProgress, PayoutNotConfirmable } from "../payouts/PayoutConfirm.ts"
import type { NoSwapRoute } from "../router/SwapRouter.ts"
import type { SwapAlreadyConfirmed, SwapConfirmInProgress, SwapNotConfirmable } from "../swaps/SwapService.ts"

export type ServiceConflict =
  | IdempotencyKeyInProgress
  | ConfirmReleased
  | DepositNotMined
  | DepositRefused
  | NoSwapRoute
  | WebhookEndpointLimit
  | WebhookEndpointDisabled
  | PayoutAlreadyConfirmed
  | PayoutNotConfirmable
  | ConfirmStillVerifying
  | PayoutConfirmInProgress
  | PayoutNotCancelable
  | PayoutBatchAlreadyConfirmed
  | PayoutBatchConfirmInProgress
  | SwapAlreadyConfirmed
  | SwapNotConfirmable
  | SwapConfirmInProgress

const cancelRefusal = (error: PayoutNotCancelable) => {
  switch (error.because) {
    case "status":
      return `this payout is ${error.status}`
    case "deposit_seen":
      return "the provider already received its deposit"
    case "deposit_confirmed":
      return "its deposit was already confirmed (or is being confirmed)"
  }
}

/** Each conflict's ErrorBody text, by tag. */
export const conflictMessages: {
  readonly [Tag in ServiceConflict["_tag"]]: (error: Extract<ServiceConflict, { readonly _tag: Tag }>) => string
} = {
  IdempotencyKeyInProgress: () => "a request with this Idempotency-Key is still in progress; retry later",
  ConfirmReleased: () => "this confirmation took too long and was released; confirm again",
  DepositNotMined: ({ field, reason }) => `${field}: not mined yet (${reason}); confirm again once it is mined`,
  DepositRefused: ({ field, reason }) => `${field}: ${reason}`,
  NoSwapRoute: ({ reason }) => `no swap route: ${reason}`,
  WebhookEndpointLimit: ({ max }) => `an integration has at most ${max} webhook endpoints; delete one first`,
  WebhookEndpointDisabled: ({ endpointId, reason }) => `webhook endpoint ${endpointId} is disabled: ${reason ?? ""}`,
  PayoutAlreadyConfirmed: () => "this payout is already confirmed with a different txHash",
  PayoutNotConfirmable: ({ status }) => `this payout is ${status} and can no longer be confirmed`,
  ConfirmStillVerifying: ({ resource }) =>
    `this ${resource}'s confirmation with this txHash is still being verified; retry shortly`,
  PayoutConfirmInProgress: () => "another confirmation of this payout is being verified; retry once it has finished",
  PayoutNotCancelable: (error) => `${cancelRefusal(error)}: it can no longer be canceled`,
  PayoutBatchAlreadyConfirmed: () => "this batch is already confirmed with a different txHash",
  PayoutBatchConfirmInProgress: () =>
    "another confirmation of this batch is being verified; retry once it has finished",
  SwapAlreadyConfirmed: () => "this swap is already confirmed with a different txHash",
  SwapNotConfirmable: ({ status }) => `this swap is ${status} and can no longer be confirmed`,
  SwapConfirmInProgress: () => "another confirmation of this swap is being verified; retry once it has finished"
}

export const isServiceConflict = <E>(error: E): error is Extract<E, ServiceConflict> =>
  Predicate.hasProperty(error, "_tag") && typeof error._tag === "string" && Object.hasOwn(conflictMessages, error._tag)

/** The contract's 409 for a service's conflict. */
export const conflictFor = (error: ServiceConflict): Conflict => {
  const message = conflictMessages[error._tag] as (error: ServiceConflict) => string
  return new Conflict({ error: message(error) })
}

/** A handler's service call with its conflicts answered as the contract's 409. */
export const answerConflicts = <A, E, R>(
  self: Effect.Effect<A, E, R>
): Effect.Effect<A, Exclude<E, Extract<E, ServiceConflict>> | Conflict, R> =>
  Effect.catchIf<A, E, R, Extract<E, ServiceConflict>, never, Conflict, never>(
    self,
    (error: E): error is Extract<E, ServiceConflict> => isServiceConflict(error),
    (error) => Effect.fail(conflictFor(error))
  )
