import { BadRequest, BelowMinimum, type FeeLeg, Requote } from "@cop-integrations/contracts"
import { BigDecimal, Effect, Option } from "effect"
import type { TokenInfo } from "../chain/Tokens.ts"
import { computePayout, formatFixed, formatPayoutAmounts, fromBaseUnits, parsePlainDecimal } from "../money/index.ts"
import type { UsdCopRates } from "../provider/PayoutProvider.ts"
import { routerFailure } from "../router/RouterErrors.ts"
import { type CopmPrice, priceFromCopm } from "./CopmFunding.ts"

/** `destinationCop` from the wire (already pattern-checked by the contract), within the Bre-B cap. */
export const parseDestinationCop = (raw: string, cap: BigDecimal.BigDecimal) =>
  Option.match(parsePlainDecimal(raw, 2), {
    onNone: () =>
      Effect.fail(new BadRequest({ error: "destinationCop: must be a plain decimal string with at most 2 decimals" })),
    onSome: (value) =>
      BigDecimal.isGreaterThan(value, cap)
        ? Effect.fail(
          new BadRequest({
            error: `destinationCop: must be at most ${BigDecimal.format(cap)} COP (Bre-B per-transfer cap)`
          })
        )
        : Effect.succeed(value)
  })

export const priceDestination = (input: {
  readonly destinationCop: BigDecimal.BigDecimal
  readonly rates: UsdCopRates
  readonly tokenDecimals: number
  readonly feeWallet: string
  /** RATE_BUFFER_BPS: extra deposit against movement before the funds arrive (DESIGN: live, default 0). */
  readonly rateBufferBps: number
}) => {
  const amounts = computePayout({
    destinationCop: input.destinationCop,
    sellRate: input.rates.sellRate,
    midRate: input.rates.midRate,
    tokenDecimals: input.tokenDecimals,
    rateBuffer: BigDecimal.make(BigInt(input.rateBufferBps), 4)
  })
  const wire = formatPayoutAmounts(amounts)
  const fees: ReadonlyArray<FeeLeg> = [
    { code: "bridge_fx", amountUsd: wire.providerFx, to: null, status: "quoted" },
    { code: "bridge", amountUsd: wire.providerFee, to: null, status: "quoted" },
    { code: "copby", amountUsd: wire.serviceFee, to: input.feeWallet, status: "quoted" }
  ]
  return { amounts, wire, fees } as const
}

const belowMinimumMessage = (which: "destination" | "provider") =>
  which === "destination"
    ? "destinationCop is below the minimum payout of 4000 COP"
    : "the amount sent to the payout provider would be below the minimum of 2 USD"

/** `priceDestination`, failing with `below_minimum` when either minimum is not met. */
export const priceAboveMinimums = (input: Parameters<typeof priceDestination>[0]) => {
  const priced = priceDestination(input)
  return priced.amounts.belowMinimum === undefined
    ? Effect.succeed(priced)
    : Effect.fail(new BelowMinimum({ error: belowMinimumMessage(priced.amounts.belowMinimum) }))
}

/** What a payout costs the user, as `GET quote` shows it and payout creation charges it. */
export interface PayoutPrice {
  /** The provider side, in USDC: X, the provider's legs and the service fee in USD. */
  readonly usd: ReturnType<typeof priceDestination>
  /** With `fromToken` COPm: the swap that pays X, and the amounts in COPm. */
  readonly copm: CopmPrice | undefined
  /** In fromToken: USDC's T, or the COPm of the swap and the fee. */
  readonly sourceAmount: string
  /** The service fee in fromToken: what `feeTransaction` moves. */
  readonly serviceFee: string
  /** receipt.totalPaid, in USD: T, or X + F + the swap leg. */
  readonly totalPaidUsd: string
  readonly fees: ReadonlyArray<FeeLeg>
  readonly effectiveUsdCop: string
  readonly display: string
  /** receipt.commission.displayAmount: the sum of the legs, 2 decimals. */
  readonly commissionDisplayAmount: string
}

/**
 * The one pricing of a payout of D COP from `fromToken`, for `GET quote` and for payout creation alike (DESIGN §3:
 * a quote prices exactly as creation would at that moment). The provider is paid X USDC whatever the user pays from;
 * COPm adds the swap that delivers X (CopmFunding). `swapTaker`: who would send that swap (see `priceFromCopm`).
 */
export const pricePayout = (input: {
  readonly destinationCop: BigDecimal.BigDecimal
  readonly rates: UsdCopRates
  readonly fromToken: TokenInfo
  readonly usdc: TokenInfo
  readonly feeWallet: string
  readonly rateBufferBps: number
  readonly swapTaker: `0x${string}`
  /** A firm COPm quote's swap sellAmount (base units): charged as quoted while the route covers X, else requote. */
  readonly quotedSwapSellAmount: bigint | undefined
}) =>
  Effect.gen(function*() {
    const usd = yield* priceAboveMinimums({
      destinationCop: input.destinationCop,
      rates: input.rates,
      tokenDecimals: input.usdc.decimals,
      feeWallet: input.feeWallet,
      rateBufferBps: input.rateBufferBps
    })
    if (input.fromToken.symbol !== "COPm") {
      return {
        usd,
        copm: undefined,
        sourceAmount: usd.wire.totalPaid,
        serviceFee: usd.wire.serviceFee,
        totalPaidUsd: usd.wire.totalPaid,
        fees: usd.fees,
        effectiveUsdCop: usd.wire.effectiveUsdCop,
        display: usd.wire.display,
        commissionDisplayAmount: usd.wire.commissionDisplayAmount
      } satisfies PayoutPrice
    }
    const copm = yield* priceFromCopm({
      copm: input.fromToken,
      usdc: input.usdc,
      destinationCop: input.destinationCop,
      midRate: input.rates.midRate,
      amounts: usd.amounts,
      usdLegs: usd.fees,
      taker: input.swapTaker,
      quotedSellAmount: input.quotedSwapSellAmount
    }).pipe(Effect.mapError((error) =>
      error._tag === "QuotedSwapShort"
        ? new Requote({
          error: `the swap route moved since the quote: the quoted COPm now buys ${
            formatFixed(fromBaseUnits(error.minBuyAmount, input.usdc.decimals), input.usdc.decimals)
          } USDC at least, short of the ${
            formatFixed(fromBaseUnits(error.needed, input.usdc.decimals), input.usdc.decimals)
          } USDC deposit: quote again`
        })
        : routerFailure(error)
    ))
    return {
      usd,
      copm,
      sourceAmount: copm.sourceAmount,
      serviceFee: copm.serviceFee,
      totalPaidUsd: copm.totalPaidUsd,
      fees: copm.fees,
      effectiveUsdCop: copm.effectiveUsdCop,
      display: copm.display,
      commissionDisplayAmount: copm.commissionDisplayAmount
    } satisfies PayoutPrice
  })
