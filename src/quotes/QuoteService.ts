import { SqlClient, SqlSchema } from "@effect/sql"
import { MercadoCerrado, type Quote } from "@cop-integrations/contracts"
import { BigDecimal, Effect, Option, Schema } from "effect"
import { Chain, type TokenSymbol } from "../chain/Chain.ts"
import { addSeconds, now } from "../Clock.ts"
import { AppConfig } from "../Config.ts"
import { newId } from "../ids.ts"
import { formatEffectiveRate, formatFixed, quoteWithoutAmount } from "../money/index.ts"
import { parseDestinationCop, priceAboveMinimums } from "../payouts/Pricing.ts"
import { Market } from "../provider/Market.ts"
import { orProviderFailure } from "../provider/ProviderErrors.ts"
import { RateCache } from "./RateCache.ts"

export const QuoteRow = Schema.Struct({
  id: Schema.String,
  sell_rate: Schema.BigDecimal,
  mid_rate: Schema.BigDecimal,
  expires_at: Schema.DateFromSelf
})
export type QuoteRow = typeof QuoteRow.Type

export const marketClosed = new MercadoCerrado({
  error: "the USD/COP market is closed; quotes and payouts resume when it opens"
})

export class QuoteService extends Effect.Service<QuoteService>()("QuoteService", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const config = yield* AppConfig
    const rateCache = yield* RateCache
    const market = yield* Market
    const chain = yield* Chain

    const findQuote = SqlSchema.findOne({
      Request: Schema.Struct({ integrationId: Schema.String, quoteId: Schema.String }),
      Result: QuoteRow,
      execute: ({ integrationId, quoteId }) =>
        sql`SELECT id, sell_rate, mid_rate, expires_at FROM quotes
            WHERE id = ${quoteId} AND integration_id = ${integrationId}`
    })

    const quote = (input: {
      readonly integrationId: string
      readonly destinationCop: string | undefined
      readonly fromToken: TokenSymbol
    }) =>
      Effect.gen(function*() {
        const destinationCop = input.destinationCop === undefined
          ? undefined
          : yield* parseDestinationCop(input.destinationCop, config.brebMaxCop)
        if (!(yield* market.isOpen)) return yield* Effect.fail(marketClosed)
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
        if (destinationCop === undefined) {
          const rate = quoteWithoutAmount(rates.sellRate)
          response = { ...base, display: rate.display, effectiveUsdCop: formatEffectiveRate(rate.effectiveUsdCop) }
        } else {
          const priced = yield* priceAboveMinimums({
            destinationCop,
            rates,
            tokenDecimals: token.decimals,
            feeWallet: config.feeWalletAddress,
            rateBufferBps: config.rateBufferBps
          })
          response = {
            ...base,
            display: priced.wire.display,
            effectiveUsdCop: priced.wire.effectiveUsdCop,
            destinationCop: formatFixed(destinationCop, 2),
            sourceAmount: priced.wire.totalPaid,
            fees: priced.fees
          }
        }
        yield* sql`INSERT INTO quotes ${
          sql.insert({
            id: quoteId,
            integration_id: input.integrationId,
            from_token: input.fromToken,
            sell_rate: BigDecimal.format(rates.sellRate),
            mid_rate: BigDecimal.format(rates.midRate),
            destination_cop: destinationCop === undefined ? null : formatFixed(destinationCop, 2),
            created_at: at,
            expires_at: expiresAt
          })
        }`.pipe(Effect.orDie)
        return response
      })

    return {
      quote,
      findQuote: (integrationId: string, quoteId: string) =>
        findQuote({ integrationId, quoteId }).pipe(Effect.orDie, Effect.map(Option.getOrUndefined))
    } as const
  })
}) {}
