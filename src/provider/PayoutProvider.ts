import type { BigDecimal } from "effect"
import { Context, Data, Effect, Layer } from "effect"
import type { KycStatus } from "@cop-integrations/contracts"
import type { TransferProgress } from "./TransferProgress.ts"
import { spanWhenTracing } from "../base/Tracing.ts"

/** The provider could not be reached or answered 5xx/timeouts after the bounded retries: 503, retry later. */
export class ProviderUnavailable extends Data.TaggedError("ProviderUnavailable")<{ readonly reason: string }> {}

/**
 * The provider answered something we cannot read (unexpected shape or an unexpected 4xx): 502. `refused`: the answer
 * was a refusal (a 4xx), so the provider made nothing for this request.
 */
export class ProviderBadResponse extends Data.TaggedError("ProviderBadResponse")<{
  readonly reason: string
  readonly refused?: boolean
}> {}

export type ProviderFailure = ProviderUnavailable | ProviderBadResponse

/**
 * A failed create that certainly made nothing at the provider: it refused the request. Any other failure (no answer,
 * 5xx, an answer we cannot read) may come after the provider acted.
 */
export const madeNothing = (error: ProviderFailure): boolean =>
  error._tag === "ProviderBadResponse" && error.refused === true

export interface UsdCopRates {
  /** COP per USD the provider sells at (what the user gets before fees) */
  readonly sellRate: BigDecimal.BigDecimal
  /** Mid-market COP per USD */
  readonly midRate: BigDecimal.BigDecimal
}

/** A provider customer started through a hosted KYC link (Bridge `POST /v0/kyc_links`). */
export interface KycLink {
  readonly customerId: string
  readonly kycUrl: string | null
  readonly kycStatus: KycStatus
}

/** A Bre-B destination registered for a customer (Bridge external account), with the owner-name check. */
export type ExternalAccount =
  | {
    readonly _tag: "Verified"
    readonly externalAccountId: string
    readonly accountOwnerName: string
    readonly bankName: string | null
    readonly documentLast4: string | null
  }
  | { readonly _tag: "OwnerMismatch" }

export interface ProviderTransfer {
  readonly transferId: string
  readonly chain: string
  readonly currency: string
  readonly depositAddress: `0x${string}`
  /** The amount the provider instructs the user to deposit (whole tokens). */
  readonly depositAmount: string
}

/**
 * The payout provider (Bridge in live mode), shaped on its REST API: exchange rates, customers through KYC
 * links, external accounts for Bre-B keys, transfers with deposit instructions. Every create carries an
 * idempotency key that the caller derives from something it has already stored, so a retry after a crash
 * reaches the same provider object.
 */
export class PayoutProvider extends Context.Service<PayoutProvider, {
  readonly usdCopRates: Effect.Effect<UsdCopRates, ProviderFailure>
  /** Whether the provider registers a destination only under a customer (Bridge does; the mock keeps none). */
  readonly destinationsPerCustomer: boolean
  readonly createKycLink: (input: {
    readonly idempotencyKey: string
    readonly email: string
    readonly userAddress: string
  }) => Effect.Effect<KycLink, ProviderFailure>
  readonly createExternalAccount: (input: {
    readonly idempotencyKey: string
    /** Provider customer; null when this deployment's provider keeps no customers (mock). */
    readonly customerId: string | null
    readonly breBKey: string
    readonly accountOwnerName: string
  }) => Effect.Effect<ExternalAccount, ProviderFailure>
  readonly createTransfer: (input: {
    readonly idempotencyKey: string
    readonly payoutId: string
    readonly customerId: string | null
    readonly amount: string
    readonly userAddress: string
    readonly externalAccountId: string
  }) => Effect.Effect<ProviderTransfer, ProviderFailure>
  /**
   * Cancels a transfer that has not received its funds (the partner canceled the payout): funds that arrive later are
   * returned to their sender, not paid out. Canceling one already canceled succeeds.
   */
  readonly cancelTransfer: (transferId: string) => Effect.Effect<void, ProviderFailure>
  /** A customer's KYC as the provider reports it now (a KYC read while no callback has decided it yet). */
  readonly getCustomerKyc: (providerCustomerId: string) => Effect.Effect<KycStatus, ProviderFailure>
  /** A transfer's progress as the provider reports it now (reconciliation when a callback was lost). */
  readonly getTransfer: (transferId: string) => Effect.Effect<TransferProgress, ProviderFailure>
}>()("PayoutProvider") {}

/** The call in its span while tracing is on. */
const span = <A, E>(operation: string, effect: Effect.Effect<A, E>) =>
  spanWhenTracing(effect, `PayoutProvider.${operation}`, { "provider.operation": operation })

/** The provider's calls, by name: what a wrapper of every call (spans, metrics) tells them apart by. */
export type ProviderOperation = Exclude<keyof PayoutProvider["Service"], "destinationsPerCustomer">

/** `provider` with each call passed through `wrap` (its operation, and the call), whichever adapter answers. */
export const wrapProviderCalls = (
  provider: PayoutProvider["Service"],
  wrap: <A>(
    operation: ProviderOperation,
    effect: Effect.Effect<A, ProviderFailure>
  ) => Effect.Effect<A, ProviderFailure>
): PayoutProvider["Service"] => ({
  // Read through, not copied: a stand-in may change it (a test's provider switching to per-customer destinations).
  get destinationsPerCustomer() {
    return provider.destinationsPerCustomer
  },
  usdCopRates: wrap("usdCopRates", provider.usdCopRates),
  createKycLink: (input) => wrap("createKycLink", provider.createKycLink(input)),
  createExternalAccount: (input) => wrap("createExternalAccount", provider.createExternalAccount(input)),
  createTransfer: (input) => wrap("createTransfer", provider.createTransfer(input)),
  cancelTransfer: (transferId) => wrap("cancelTransfer", provider.cancelTransfer(transferId)),
  getCustomerKyc: (customerId) => wrap("getCustomerKyc", provider.getCustomerKyc(customerId)),
  getTransfer: (transferId) => wrap("getTransfer", provider.getTransfer(transferId))
})

/**
 * `provider` with a span per call (`PayoutProvider.createTransfer`, ...), whichever adapter answers; the live client's
 * HTTP requests are its children and carry its trace to the provider (`traceparent`).
 */
export const withProviderSpans = (provider: PayoutProvider["Service"]): PayoutProvider["Service"] =>
  wrapProviderCalls(provider, span)

/** The PayoutProvider `layer` provides, with its spans (`withProviderSpans`). */
export const withProviderSpansLayer = <E, R>(
  layer: Layer.Layer<PayoutProvider, E, R>
): Layer.Layer<PayoutProvider, E, R> =>
  Layer.effect(PayoutProvider, Effect.map(Effect.service(PayoutProvider), withProviderSpans)).pipe(Layer.provide(layer))
