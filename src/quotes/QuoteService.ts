import { BadRequest, type IntegrationId, type Quote, type QuoteId, Requote } from "@cop-integrations/contracts"
import { BigDecimal, Context, Effect, Layer, Option } from "effect"
import { getAddress } from "viem"
import { Chain, type TokenSymbol } from "../chain/Chain.ts"
import { addSeconds, now } from "../base/Clock.ts"
import { AppConfig } from "../config/Config.ts"
import { newId } from "../base/ids.ts"
import { formatEffectiveRate, formatFixed, fromBaseUnits, quoteWithoutAmount, toBaseUnits } from "../money/index.ts"
import { parseDestinationCop, pricePayout } from "../pricing/Pricing.ts"
import { Market } from "../market/Market.ts"
import { marketClosed } from "../market/MarketClosed.ts"
import type { UsdCopRates } from "../provider/PayoutProvider.ts"
import { orProviderFailure } from "../provider/ProviderErrors.ts"
import { SwapRouter } from "../router/SwapRouter.ts"
import { QuoteRepo } from "./QuoteRepo.ts"
import { RateCache } from "./RateCache.ts"

/** What a quote fixes for the payout created with it: its rates, and for COPm with an amount its swap's sellAmount. */
export interface QuotedTerms {
  readonly rates: UsdCopRates
  readonly swapSellAmount: bigint | undefined
}

const requote = (error: string) => Effect.fail(new Requote({ error }))

export class QuoteService extends Context.Service<QuoteService>()("QuoteService", {
  make: Effect.gen(function*() {
    const quotes = yield* QuoteRepo
    const config = yield* AppConfig
    const rateCache = yield* RateCache
    const market = yield* Market
    const chain = yield* Chain
    // Taken at construction: pricing a COPm quote uses it, so the methods require no SwapRouter of their own.
    const router = yield* SwapRouter

    const quote = Effect.fn("QuoteService.quote")(function*(input: {
      readonly integrationId: IntegrationId
      readonly destinationCop: string | undefined
      readonly fromToken: TokenSymbol
    }) {
      const destinationCop = input.destinationCop === undefined
        ? undefined
        : yield* parseDestinationCop(input.destinationCop, config.brebMaxCop)
      // A moving market is open to a quote: a quote is a fresh price.
      const marketState = yield* market.state
      if (marketState._tag === "Closed") return yield* marketClosed(marketState.reopensAt)
      const rates = yield* orProviderFailure(rateCache.usdCopRates)
      const token = chain.token(input.fromToken)
      const at = yield* now
      const expiresAt = addSeconds(at, config.quoteTtlSeconds)
      const quoteId = newId("qt")

      const base = {
        quoteId,
        fromToken: input.fromToken,
        sellRateUsdCop: BigDecimal.format(rates.sellRate),
        cached: rates.cached,
        expiresAt: expiresAt.toISOString()
      }
      let response: Quote
      let swapSellAmount: string | null = null
      if (destinationCop === undefined) {
        // The rate only, for COPm too: the swap's cost depends on the amount, so it is priced with one.
        const rate = quoteWithoutAmount(rates.sellRate)
        response = { ...base, display: rate.display, effectiveUsdCop: formatEffectiveRate(rate.effectiveUsdCop) }
      } else {
        const price = yield* pricePayout({
          destinationCop,
          rates,
          fromToken: token,
          usdc: chain.token("USDC"),
          feeWallet: config.feeWalletAddress,
          rateBufferBps: config.rateBufferBps,
          swapTaker: getAddress(config.feeWalletAddress),
          quotedSwapSellAmount: undefined
        }).pipe(
          Effect.provideService(SwapRouter, router),
          Effect.catchTag("Requote", Effect.die) // only a quoted swap can fall short, and a quote has none
        )
        if (price.copm !== undefined) {
          swapSellAmount = formatFixed(fromBaseUnits(price.copm.sellAmount, token.decimals), token.decimals)
        }
        response = {
          ...base,
          display: price.display,
          effectiveUsdCop: price.effectiveUsdCop,
          destinationCop: formatFixed(destinationCop, 2),
          sourceAmount: price.sourceAmount,
          fees: price.fees
        }
      }
      yield* quotes.insert({
        id: quoteId,
        integration_id: input.integrationId,
        from_token: input.fromToken,
        sell_rate: BigDecimal.format(rates.sellRate),
        mid_rate: BigDecimal.format(rates.midRate),
        destination_cop: destinationCop === undefined ? null : formatFixed(destinationCop, 2),
        swap_sell_amount: swapSellAmount,
        created_at: at,
        expires_at: expiresAt
      })
      return response
    })

    /**
     * The price a payout is charged at: the current rates, or what its quote fixed while the quote is firm (DESIGN
     * §3: the service absorbs movement within tolerance; beyond it or after expiry → requote). A quote with an amount
     * is for that amount and fromToken only: another is requote, naming both. A quote without one fixes the rate only.
     */
    const termsFor = Effect.fn("QuoteService.termsFor")(function*(input: {
      readonly integrationId: IntegrationId
      readonly quoteId: QuoteId | undefined
      readonly destinationCop: BigDecimal.BigDecimal
      readonly fromToken: TokenSymbol
      readonly current: UsdCopRates
      readonly at: Date
    }) {
      if (input.quoteId === undefined) {
        return { rates: input.current, swapSellAmount: undefined } satisfies QuotedTerms
      }
      const found = yield* quotes.findOwned(input.integrationId, input.quoteId)
      if (Option.isNone(found)) {
        return yield* Effect.fail(new BadRequest({ error: "quoteId: no such quote for this integration" }))
      }
      const quote = found.value
      // The amount and the token were priced together; a rate is the same whatever the token (DESIGN §3).
      if (quote.destination_cop !== null && quote.from_token !== input.fromToken) {
        return yield* requote(
          `fromToken: the quote is for paying from ${quote.from_token}, this payout pays from ${input.fromToken}: quote again with fromToken=${input.fromToken}`
        )
      }
      if (quote.destination_cop !== null && !BigDecimal.equals(quote.destination_cop, input.destinationCop)) {
        const quoted = formatFixed(quote.destination_cop, 2)
        const asked = formatFixed(input.destinationCop, 2)
        return yield* requote(
          `destinationCop: the quote is for ${quoted} COP, this payout asks for ${asked} COP: quote again for ${asked} COP`
        )
      }
      if (quote.expires_at.getTime() <= input.at.getTime()) {
        return yield* requote("the quote has expired: quote again")
      }
      const floor = BigDecimal.multiply(
        quote.sell_rate,
        BigDecimal.subtract(BigDecimal.fromBigInt(1n), BigDecimal.make(BigInt(config.requoteToleranceBps), 4))
      )
      if (BigDecimal.isLessThan(input.current.sellRate, floor)) {
        return yield* requote("the rate moved against the user beyond tolerance: quote again")
      }
      return {
        rates: { sellRate: quote.sell_rate, midRate: quote.mid_rate },
        swapSellAmount: quote.swap_sell_amount === null
          ? undefined
          : toBaseUnits(quote.swap_sell_amount, chain.token(input.fromToken).decimals)
      } satisfies QuotedTerms
    })

    return { quote, termsFor } as const
  })
}) {
  static readonly Default = Layer.effect(this, this.make)
}
