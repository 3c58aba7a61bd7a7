import {
  type BadRequest,
  type CreatePayoutRequest,
  DestinationMismatch,
  docsPointer,
  type IntegrationId,
  lowerCaseTxHash,
  NotFound,
  type Payout,
  PayoutId,
  type PayoutList,
  type PayoutStatus,
  Requote,
  type TxHash
} from "@cop-integrations/contracts"
import { BigDecimal, Context, Effect, Layer, Option, Schema } from "effect"
import { getAddress } from "viem"
import { Chain } from "../chain/Chain.ts"
import { addSeconds, now } from "../base/Clock.ts"
import { AppConfig } from "../config/Config.ts"
import { PageBudget } from "../db/PageBudget.ts"
import { type Claim, IdempotencyStore } from "../idempotency/IdempotencyStore.ts"
import { newId } from "../base/ids.ts"
import { DestinationPreviews, previewedOr } from "../destinations/DestinationPreviews.ts"
import { CustomerKyc } from "../kyc/CustomerKyc.ts"
import { formatFixed } from "../money/index.ts"
import { Market } from "../market/Market.ts"
import { marketClosed } from "../market/MarketClosed.ts"
import { madeNothing, PayoutProvider, type UsdCopRates } from "../provider/PayoutProvider.ts"
import { providerIdempotencyKey } from "../provider/IdempotencyKeys.ts"
import { orProviderFailure } from "../provider/ProviderErrors.ts"
import { QuoteService } from "../quotes/QuoteService.ts"
import { RateCache } from "../quotes/RateCache.ts"
import { routerFailure } from "../router/RouterErrors.ts"
import { SwapRouter } from "../router/SwapRouter.ts"
import { filterDigest, instantOf, keysetPage, type ListRequest, rowsFetched } from "../db/Pagination.ts"
import { fundPayout } from "./Funding.ts"
import { hop, type PayoutFilters, PayoutRepo } from "./PayoutRepo.ts"
import type { PayoutRow } from "./PayoutRow.ts"
import { PayoutChainId, presentPayout } from "./Present.ts"
import { parseDestinationCop, pricePayout } from "../pricing/Pricing.ts"

export const PAYOUTS_PATH = "/api/integrations/breb/payouts"

/**
 * The terms a payout is priced at, recorded with its Idempotency-Key before the provider is called: the rates, and a
 * firm COPm quote's swap amount (COPm base units), so a retry that takes the key over charges what the first try did.
 */
const PinnedTerms = Schema.Struct({
  sellRate: Schema.BigDecimalFromString,
  midRate: Schema.BigDecimalFromString,
  swapSellAmount: Schema.optional(Schema.BigIntFromString)
})

export interface CreateOutcome {
  readonly status: number
  readonly body: unknown
  /** `JSON.stringify(body)`: the first response's bytes (a replay's are the same), serialised once. */
  readonly bodyJson: string
  readonly replayed: boolean
}

/** What pricing a payout reads of its request. */
type PricedRequest = Pick<CreatePayoutRequest, "userAddress" | "fromToken" | "quoteId">

/** What the provider's side of a payout reads of its request. */
type ProvisionedRequest = Pick<CreatePayoutRequest, "userAddress" | "breBKey" | "accountOwnerName">

/** A payouts list request: the common list parameters and the payouts' own filters. */
export interface PayoutListRequest extends ListRequest {
  readonly status?: PayoutStatus | undefined
  readonly txHash?: TxHash | undefined
  readonly breBKeyLast4?: string | undefined
}

export class PayoutService extends Context.Service<PayoutService>()("PayoutService", {
  make: Effect.gen(function*() {
    const config = yield* AppConfig
    const chainId = yield* PayoutChainId
    const present = (row: PayoutRow) => presentPayout(row, chainId)
    const market = yield* Market
    const rateCache = yield* RateCache
    const quotes = yield* QuoteService
    const provider = yield* PayoutProvider
    const chain = yield* Chain
    const payouts = yield* PayoutRepo
    const idempotency = yield* IdempotencyStore
    const pageBudget = yield* PageBudget
    // Taken at construction: pricing and funding from COPm use it, so the methods require no SwapRouter of their own.
    const router = yield* SwapRouter
    const previews = yield* DestinationPreviews
    const customerKyc = yield* CustomerKyc

    /**
     * Whether `userAddress` may be paid out now: its provider customer (KYC approved, else needs_kyc), and a market
     * that is open (else mercado_cerrado) and not moving (else requote).
     */
    const payerReady = (integrationId: IntegrationId, userAddress: string) =>
      Effect.gen(function*() {
        const providerCustomerId = yield* customerKyc.approvedCustomerId(integrationId, userAddress)
        const marketState = yield* market.state
        if (marketState._tag === "Closed") return yield* marketClosed(marketState.reopensAt)
        // A moving market: no price taken now stands, the partner quotes again.
        if (marketState._tag === "Moving") return yield* Effect.fail(new Requote({ error: marketState.reason }))
        return providerCustomerId
      })

    /**
     * The payout priced as GET quote prices (one path), before any provider call: a COPm route's failure leaves nothing
     * behind. `pinned`: the terms a stopped try recorded with its Idempotency-Key (rates, a firm COPm quote's swap
     * amount), which a retry prices with; else the current rates or the `quoteId`'s. `record`: the terms to record
     * with the key (none when they were pinned).
     */
    const priceOne = (
      integrationId: IntegrationId,
      request: PricedRequest,
      destinationCop: BigDecimal.BigDecimal,
      pinned: unknown,
      at: Date
    ) =>
      Effect.gen(function*() {
        const pinnedTerms = Schema.decodeUnknownOption(PinnedTerms)(pinned)
        const token = chain.token(request.fromToken ?? "USDC")
        const terms = Option.isSome(pinnedTerms)
          ? {
            rates: { sellRate: pinnedTerms.value.sellRate, midRate: pinnedTerms.value.midRate },
            swapSellAmount: pinnedTerms.value.swapSellAmount
          }
          : yield* Effect.flatMap(
            orProviderFailure(rateCache.usdCopRates),
            (current) =>
              quotes.termsFor({
                integrationId,
                quoteId: request.quoteId,
                destinationCop,
                fromToken: token.symbol,
                current,
                at
              })
          )
        const rates: UsdCopRates = terms.rates
        // The provider is paid in USDC whatever the user funds the payout from.
        const usdc = chain.token("USDC")
        const price = yield* pricePayout({
          destinationCop,
          rates,
          fromToken: token,
          usdc,
          feeWallet: config.feeWalletAddress,
          rateBufferBps: config.rateBufferBps,
          swapTaker: getAddress(request.userAddress),
          quotedSwapSellAmount: terms.swapSellAmount
        }).pipe(Effect.provideService(SwapRouter, router))
        const record = Option.isSome(pinnedTerms) ? undefined : Schema.encodeSync(PinnedTerms)({
          sellRate: rates.sellRate,
          midRate: rates.midRate,
          ...(terms.swapSellAmount === undefined ? {} : { swapSellAmount: terms.swapSellAmount })
        })
        return { token, usdc, rates, price, record }
      })

    /**
     * The provider's side of a priced payout (its external account, unless a preview verified it, and its transfer)
     * and the row to write. The transfer is the one call with a lasting effect: `claim.outsideCall` keeps the payout id
     * and transfer key for a retry from there on.
     */
    const provisionOne = (
      integrationId: IntegrationId,
      request: ProvisionedRequest,
      destinationCop: BigDecimal.BigDecimal,
      priced: Effect.Success<ReturnType<typeof priceOne>>,
      previewed: Effect.Success<ReturnType<typeof previews.destinationFor>>,
      providerCustomerId: Effect.Success<ReturnType<typeof payerReady>>,
      claim: {
        readonly payoutId: PayoutId
        readonly transferKey: string
        readonly outsideCall: Claim["outsideCall"]
      }
    ) =>
      Effect.gen(function*() {
        const { price, rates, token, usdc } = priced
        const destination = yield* previewedOr(
          previewed,
          previews.registerDestination(integrationId, request, providerCustomerId)
        )
        if (destination._tag === "OwnerMismatch") {
          return yield* Effect.fail(
            new DestinationMismatch({
              error:
                `the account owner name does not match the holder of this Bre-B key; check both with a payee preview (POST breb/destinations/preview) first (see ${
                  docsPointer("destination_mismatch")
                })`
            })
          )
        }
        const payoutId = claim.payoutId
        const transfer = yield* orProviderFailure(claim.outsideCall(
          provider.createTransfer({
            idempotencyKey: claim.transferKey,
            payoutId,
            customerId: providerCustomerId,
            amount: price.usd.wire.deposit,
            userAddress: request.userAddress,
            externalAccountId: destination.externalAccountId
          }),
          madeNothing
        ))
        if (transfer.depositAmount !== price.usd.wire.deposit) {
          yield* Effect.logWarning("provider deposit instructions differ from our price").pipe(
            Effect.annotateLogs({ payoutId, transferId: transfer.transferId })
          )
        }
        const funding = yield* fundPayout({
          price,
          fromToken: token,
          usdc,
          user: getAddress(request.userAddress),
          depositAddress: transfer.depositAddress,
          feeWallet: config.feeWalletAddress
        }).pipe(Effect.provideService(SwapRouter, router), Effect.mapError((error) => routerFailure(error)))
        // Its times are the database's at the INSERT (PayoutRepo.insert): the list's order is safe to follow.
        const row = (createdAt: Date): PayoutRow => ({
          id: payoutId,
          integration_id: integrationId,
          status: "awaiting_deposit",
          user_address: request.userAddress,
          from_token: token.symbol,
          destination_cop: formatFixed(destinationCop, 2),
          bre_b_key: request.breBKey,
          account_owner_name: destination.accountOwnerName,
          bank_name: destination.bankName,
          document_last4: destination.documentLast4,
          sell_rate: BigDecimal.format(rates.sellRate),
          mid_rate: BigDecimal.format(rates.midRate),
          deposit_chain: transfer.chain,
          deposit_currency: transfer.currency,
          deposit_address: transfer.depositAddress,
          deposit_amount: price.usd.wire.deposit,
          service_fee: price.serviceFee,
          total_paid: price.totalPaidUsd,
          source_amount: price.copm === undefined ? null : price.sourceAmount,
          effective_usd_cop: price.effectiveUsdCop,
          rate_display: price.display,
          fee_legs: price.fees,
          transaction: funding.transaction,
          fee_transaction: funding.feeTransaction,
          commission_usd: price.commissionDisplayAmount,
          provider_transfer_id: transfer.transferId,
          tx_hash: null,
          fee_tx_hash: null,
          created_at: createdAt,
          updated_at: createdAt,
          expires_at: addSeconds(createdAt, config.payoutWindowMinutes * 60),
          completed_at: null,
          timeline: [hop("created", createdAt, "api")]
        })
        return row
      })

    /**
     * Everything a payout needs before it is written: checks, price, and the provider's external account and
     * transfer. No transaction is open here: the provider calls run outside any, each statement on its own.
     * `claim` names the payout id allocated before the call and the provider key derived from it, so a retry after
     * a crash reaches the same provider transfer; the terms (rates, a firm COPm quote's swap amount) are recorded before
     * the provider is called, and a retry that takes the key over prices with them, so it sends the provider the same
     * transfer request and charges what the first try quoted.
     * Precedence after validation and idempotency: needs_kyc → mercado_cerrado → requote → below_minimum →
     * destination_mismatch (DESIGN §3).
     */
    const prepare = (
      integrationId: IntegrationId,
      request: CreatePayoutRequest,
      destinationCop: BigDecimal.BigDecimal,
      claim: {
        readonly payoutId: PayoutId
        readonly transferKey: string
        readonly pinned: unknown
        readonly record: (terms: typeof PinnedTerms.Encoded) => Effect.Effect<void>
        readonly outsideCall: Claim["outsideCall"]
      }
    ) =>
      Effect.gen(function*() {
        // A `previewId` is checked with the body, before anything else; its destination is reused below.
        const previewed = yield* previews.destinationFor(integrationId, request)
        const providerCustomerId = yield* payerReady(integrationId, request.userAddress)
        const priced = yield* priceOne(integrationId, request, destinationCop, claim.pinned, yield* now)
        if (priced.record !== undefined) yield* claim.record(priced.record)
        const row = yield* provisionOne(
          integrationId,
          request,
          destinationCop,
          priced,
          previewed,
          providerCustomerId,
          claim
        )
        return { integrationId, row }
      })

    /** The write after the provider calls: one INSERT (inside the idempotency store's finishing transaction). */
    const persist = (
      prepared: { readonly integrationId: IntegrationId; readonly row: (createdAt: Date) => PayoutRow }
    ) =>
      Effect.map(payouts.insert(prepared.integrationId, prepared.row), (inserted) => ({
        status: 201,
        body: inserted.payout,
        bodyJson: inserted.json,
        resourceId: inserted.row.id
      }))

    /**
     * Three short steps, none held across the provider: record intent (the Idempotency-Key row `started` with the
     * payout id allocated here), prepare (provider calls outside any transaction), write the payout.
     */
    const create = Effect.fn("PayoutService.create")(function*(input: {
      readonly integrationId: IntegrationId
      readonly request: CreatePayoutRequest
      readonly idempotencyKey: string | undefined
    }) {
      const destinationCop = yield* parseDestinationCop(input.request.destinationCop, config.brebMaxCop)
      const payoutId = newId("po")
      const outcome: CreateOutcome = yield* idempotency.runOptionally(
        {
          integrationId: input.integrationId,
          key: input.idempotencyKey,
          request: { method: "POST", path: PAYOUTS_PATH, body: input.request },
          resourceId: payoutId,
          providerKey: providerIdempotencyKey("transfer", payoutId)
        },
        (claim) =>
          prepare(input.integrationId, input.request, destinationCop, {
            // The key's row keeps the payout id as text (it serves every resource kind): this one or a stopped try's.
            payoutId: PayoutId.make(claim.resourceId),
            transferKey: claim.providerKey,
            pinned: claim.intent,
            record: claim.record,
            outsideCall: claim.outsideCall
          }),
        persist
      )
      return outcome
    })

    const get = Effect.fn("PayoutService.get")(function*(integrationId: IntegrationId, payoutId: PayoutId) {
      const found = yield* payouts.findOwned(integrationId, payoutId)
      if (Option.isNone(found)) return yield* Effect.fail(new NotFound({ error: `no payout ${payoutId}` }))
      return present(found.value)
    })

    /** A page of the integration's payouts, narrowed by the filters given (all must hold). */
    const list = Effect.fn("PayoutService.list")(
      function*(request: PayoutListRequest): Effect.fn.Return<PayoutList, BadRequest> {
        const filters: PayoutFilters = {
          status: request.status,
          txHash: request.txHash === undefined ? undefined : lowerCaseTxHash(request.txHash),
          breBKeyLast4: request.breBKeyLast4?.toLowerCase()
        }
        const digest = filterDigest(
          { ...filters, createdTo: instantOf(request.createdTo) },
          { createdFrom: instantOf(request.createdFrom) }
        )
        return yield* keysetPage(
          { ...request, filterDigest: digest },
          (page) => payouts.page(page, filters),
          present
        ).pipe(pageBudget.withRows(rowsFetched(request.limit)))
      }
    )

    return {
      create,
      get,
      list,
      /** The steps of one payout's creation, for a batch to take each of its items through. */
      steps: { payerReady, priceOne, provisionOne }
    } as const
  })
}) {
  static readonly Default = Layer.effect(this, this.make)
}

export type { Payout }
