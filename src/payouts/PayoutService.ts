import {
  BadRequest,
  type CreatePayoutRequest,
  DestinationMismatch,
  NeedsKyc,
  NotFound,
  type Payout,
  type PayoutList,
  Requote
} from "@cop-integrations/contracts"
import { BigDecimal, Effect, Option, Schema } from "effect"
import { getAddress } from "viem"
import { Chain } from "../chain/Chain.ts"
import { erc20Transfer } from "../chain/Erc20.ts"
import { addSeconds, now } from "../Clock.ts"
import { AppConfig } from "../Config.ts"
import { PageBudget } from "../db/PageBudget.ts"
import { type Claim, IdempotencyStore, requestFingerprint } from "../idempotency/IdempotencyStore.ts"
import { newId } from "../ids.ts"
import { CustomerRepo } from "../kyc/CustomerRepo.ts"
import { formatFixed, toBaseUnits } from "../money/index.ts"
import { Market } from "../provider/Market.ts"
import { madeNothing, PayoutProvider, type UsdCopRates } from "../provider/PayoutProvider.ts"
import { providerIdempotencyKey } from "../provider/IdempotencyKeys.ts"
import { orProviderFailure } from "../provider/ProviderErrors.ts"
import { marketClosed, QuoteService } from "../quotes/QuoteService.ts"
import { RateCache } from "../quotes/RateCache.ts"
import { routerFailure } from "../swaps/RouterErrors.ts"
import { keysetPage, type ListRequest, rowsFetched } from "./Cursor.ts"
import { fundFromCopm } from "./CopmFunding.ts"
import { PayoutRepo } from "./PayoutRepo.ts"
import type { PayoutRow } from "./PayoutRow.ts"
import { presentPayout } from "./Present.ts"
import { parseDestinationCop, priceAboveMinimums } from "./Pricing.ts"
import { RequoteGuard } from "./RequoteGuard.ts"

export const PAYOUTS_PATH = "/api/integrations/breb/payouts"

/** The rates a payout is priced at, recorded with its Idempotency-Key before the provider is called. */
const PinnedRates = Schema.Struct({ sellRate: Schema.BigDecimal, midRate: Schema.BigDecimal })

export interface CreateOutcome {
  readonly status: number
  readonly body: unknown
  readonly replayed: boolean
}

export class PayoutService extends Effect.Service<PayoutService>()("PayoutService", {
  effect: Effect.gen(function*() {
    const config = yield* AppConfig
    const customers = yield* CustomerRepo
    const market = yield* Market
    const rateCache = yield* RateCache
    const quotes = yield* QuoteService
    const provider = yield* PayoutProvider
    const chain = yield* Chain
    const payouts = yield* PayoutRepo
    const idempotency = yield* IdempotencyStore
    const requoteGuard = yield* RequoteGuard
    const pageBudget = yield* PageBudget

    const requote = (error: string) => Effect.fail(new Requote({ error }))

    /**
     * The price a payout is charged at: the current rates, or a quote's rates while the quote is firm (DESIGN §3: the
     * service absorbs movement within tolerance; beyond it or after expiry → requote).
     */
    const pricingRates = (integrationId: string, quoteId: string | undefined, current: UsdCopRates, at: Date) =>
      Effect.gen(function*() {
        if (quoteId === undefined) return current
        const quote = yield* quotes.findQuote(integrationId, quoteId)
        if (quote === undefined) {
          return yield* Effect.fail(new BadRequest({ error: "quoteId: no such quote for this integration" }))
        }
        if (quote.expires_at.getTime() <= at.getTime()) return yield* requote("the quote has expired: quote again")
        const floor = BigDecimal.multiply(
          quote.sell_rate,
          BigDecimal.subtract(BigDecimal.fromBigInt(1n), BigDecimal.make(BigInt(config.requoteToleranceBps), 4))
        )
        if (BigDecimal.lessThan(current.sellRate, floor)) {
          return yield* requote("the rate moved against the user beyond tolerance: quote again")
        }
        return { sellRate: quote.sell_rate, midRate: quote.mid_rate } satisfies UsdCopRates
      })

    /**
     * Everything a payout needs before it is written: checks, price, and the provider's external account and
     * transfer. No transaction is open here: the provider calls run outside any, each statement on its own.
     * `claim` names the payout id allocated before the call and the provider key derived from it, so a retry after
     * a crash reaches the same provider transfer; the rates are recorded before the provider is called, and a retry
     * that takes over a crashed request prices with them, so it sends the provider the same transfer request.
     * Precedence after validation and idempotency: needs_kyc → mercado_cerrado → requote → below_minimum →
     * destination_mismatch (DESIGN §3).
     */
    const prepare = (
      integrationId: string,
      request: CreatePayoutRequest,
      destinationCop: BigDecimal.BigDecimal,
      claim: {
        readonly payoutId: string
        readonly transferKey: string
        readonly pinned: unknown
        readonly record: (rates: typeof PinnedRates.Encoded) => Effect.Effect<void>
        readonly outsideCall: Claim["outsideCall"]
      }
    ) =>
      Effect.gen(function*() {
        const customer = yield* customers.find({ integrationId, userAddress: request.userAddress })
        if (!Option.exists(customer, (row) => row.kyc_status === "approved")) {
          return yield* Effect.fail(
            new NeedsKyc({ error: "KYC is not approved for this userAddress: complete kyc/otp/send and kyc/otp/verify" })
          )
        }
        if (!(yield* market.isOpen)) return yield* Effect.fail(marketClosed)
        yield* requoteGuard.beforePricing
        const at = yield* now
        const pinned = Schema.decodeUnknownOption(PinnedRates)(claim.pinned)
        const rates: UsdCopRates = Option.isSome(pinned) ? pinned.value : yield* Effect.flatMap(
          orProviderFailure(rateCache.usdCopRates),
          (current) => pricingRates(integrationId, request.quoteId, current, at)
        )

        const token = chain.token(request.fromToken ?? "USDC")
        // The provider is paid in USDC whatever the user funds the payout from.
        const usdc = chain.token("USDC")
        const priced = yield* priceAboveMinimums({
          destinationCop,
          rates,
          tokenDecimals: usdc.decimals,
          feeWallet: config.feeWalletAddress,
          rateBufferBps: config.rateBufferBps
        })

        if (Option.isNone(pinned)) yield* claim.record(Schema.encodeSync(PinnedRates)(rates))

        const providerCustomerId = Option.getOrNull(Option.flatMap(customer, (row) => Option.fromNullable(row.provider_customer_id)))
        const destination = yield* orProviderFailure(provider.createExternalAccount({
          idempotencyKey: providerIdempotencyKey(
            "external_account",
            providerCustomerId ?? `${integrationId}:${request.userAddress.toLowerCase()}`,
            request.breBKey,
            request.accountOwnerName
          ),
          customerId: providerCustomerId,
          breBKey: request.breBKey,
          accountOwnerName: request.accountOwnerName
        }))
        if (destination._tag === "OwnerMismatch") {
          return yield* Effect.fail(
            new DestinationMismatch({ error: "the account owner name does not match the holder of this Bre-B key" })
          )
        }

        const payoutId = claim.payoutId
        // The one call with a lasting effect: a failure from here on may leave a transfer at the provider, so the
        // Idempotency-Key keeps this payout id (and the transfer key) for the retry.
        const transfer = yield* orProviderFailure(claim.outsideCall(
          provider.createTransfer({
            idempotencyKey: claim.transferKey,
            payoutId,
            customerId: providerCustomerId,
            amount: priced.wire.deposit,
            userAddress: request.userAddress,
            externalAccountId: destination.externalAccountId
          }),
          madeNothing
        ))
        if (transfer.depositAmount !== priced.wire.deposit) {
          yield* Effect.logWarning("provider deposit instructions differ from our price").pipe(
            Effect.annotateLogs({ payoutId, transferId: transfer.transferId })
          )
        }
        const funding = token.symbol === "COPm"
          ? yield* fundFromCopm({
            copm: token,
            usdc,
            destinationCop,
            midRate: rates.midRate,
            amounts: priced.amounts,
            usdLegs: priced.fees,
            user: getAddress(request.userAddress),
            depositAddress: transfer.depositAddress,
            feeWallet: config.feeWalletAddress
          }).pipe(Effect.mapError((error) => routerFailure(error)))
          : undefined
        const row: PayoutRow = {
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
          deposit_amount: priced.wire.deposit,
          ...(funding === undefined
            ? {
              service_fee: priced.wire.serviceFee,
              total_paid: priced.wire.totalPaid,
              source_amount: null,
              effective_usd_cop: priced.wire.effectiveUsdCop,
              rate_display: priced.wire.display,
              fee_legs: priced.fees,
              transaction: erc20Transfer(usdc.address, transfer.depositAddress, toBaseUnits(priced.amounts.deposit, usdc.decimals)),
              fee_transaction: erc20Transfer(
                usdc.address,
                config.feeWalletAddress,
                toBaseUnits(priced.amounts.serviceFee, usdc.decimals)
              ),
              commission_usd: priced.wire.commissionDisplayAmount
            }
            : {
              service_fee: funding.serviceFee,
              total_paid: funding.totalPaidUsd,
              source_amount: funding.sourceAmount,
              effective_usd_cop: funding.effectiveUsdCop,
              rate_display: funding.display,
              fee_legs: funding.fees,
              transaction: funding.transaction,
              fee_transaction: funding.feeTransaction,
              commission_usd: funding.commissionDisplayAmount
            }),
          provider_transfer_id: transfer.transferId,
          tx_hash: null,
          fee_tx_hash: null,
          created_at: at,
          updated_at: at,
          expires_at: addSeconds(at, config.payoutWindowMinutes * 60),
          completed_at: null
        }
        return row
      })

    /** The write after the provider calls: one INSERT (inside the idempotency store's finishing transaction). */
    const persist = (row: PayoutRow) =>
      Effect.map(payouts.insert(row), (stored) => ({
        status: 201,
        body: presentPayout(stored) as unknown,
        resourceId: stored.id
      }))

    /**
     * Three short steps, none held across the provider: record intent (the Idempotency-Key row `started` with the
     * payout id allocated here), prepare (provider calls outside any transaction), write the payout.
     */
    const create = (input: {
      readonly integrationId: string
      readonly request: CreatePayoutRequest
      readonly idempotencyKey: string | undefined
    }) =>
      Effect.gen(function*() {
        const destinationCop = yield* parseDestinationCop(input.request.destinationCop, config.brebMaxCop)
        const payoutId = newId("po")
        const transferKey = providerIdempotencyKey("transfer", payoutId)
        if (input.idempotencyKey === undefined) {
          const row = yield* prepare(input.integrationId, input.request, destinationCop, {
            payoutId,
            transferKey,
            pinned: null,
            record: () => Effect.void,
            outsideCall: (call) => call
          })
          const created = yield* persist(row)
          return { status: created.status, body: created.body, replayed: false } satisfies CreateOutcome
        }
        const result = yield* idempotency.run(
          {
            integrationId: input.integrationId,
            key: input.idempotencyKey,
            fingerprint: requestFingerprint("POST", PAYOUTS_PATH, input.request),
            resourceId: payoutId,
            providerKey: transferKey
          },
          (claim) =>
            prepare(input.integrationId, input.request, destinationCop, {
              payoutId: claim.resourceId,
              transferKey: claim.providerKey,
              pinned: claim.intent,
              record: claim.record,
              outsideCall: claim.outsideCall
            }),
          persist
        )
        return { status: result.status, body: result.body, replayed: result.replayed } satisfies CreateOutcome
      })

    const get = (integrationId: string, payoutId: string) =>
      Effect.flatMap(payouts.findOwned(integrationId, payoutId), (found) =>
        Option.match(found, {
          onNone: () => Effect.fail(new NotFound({ error: `no payout ${payoutId}` })),
          onSome: (row) => Effect.succeed(presentPayout(row))
        }))

    const list = (request: ListRequest): Effect.Effect<PayoutList, BadRequest> => 
      keysetPage(request, payouts.page, presentPayout).pipe(pageBudget.withRows(rowsFetched(request.limit)))

    return { create, get, list } as const
  })
}) {}

export type { Payout }
