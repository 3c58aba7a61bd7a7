/**
 * A payout funded from the COP stablecoin (`fromToken: "COPm"`), for a user who holds only COPm. The provider is
 * still paid X USDC (DESIGN §3's formulas, unchanged); the user's one signed `transaction` is the router swap whose
 * output goes straight to the provider's deposit address and whose minAmountOut is at least X. Exact rules:
 * - sellAmount: the least COPm (18 decimals) whose route's minBuyAmount ≥ X, where the route can name it exactly (the
 *   mock's; then checked: that amount covers X and one base unit less does not); else (a live aggregator, which
 *   quotes only a given amount) the first of at most four asks that covers X: a first guess X × M / (1 − slippage)
 *   rounded up, then scaled by X / minBuyAmount (rounded up), which may be a little above the least;
 * - `swap` leg (USD) = sellAmount / M − X, rounded half-up to 6 decimals, never below 0: what the route and the
 *   slippage headroom cost against mid-market (the headroom, when not used, reaches the provider as extra USDC);
 * - the service fee F (USD, as for USDC) is paid in COPm: F × M rounded UP to 18 decimals (`feeTransaction`);
 * - sourceAmount (COPm) = sellAmount + the COPm fee; receipt.totalPaid (USD) = X + F + swap leg;
 *   effectiveUsdCop = D / totalPaid rounded down to 6 decimals, display to 2; commission = the sum of the four legs;
 * - a firm quote (`quoteId` of a COPm quote with an amount) keeps its sellAmount while the route still delivers X for
 *   it, else `requote` (priced before the provider is asked); if the route moves between pricing and the calldata,
 *   asked after the provider's transfer, the create is a 503 and its retry prices again.
 */
import type { FeeLeg, PreparedTx } from "@cop-integrations/contracts"
import { BigDecimal, Data, Effect, Option } from "effect"
import type { TokenInfo } from "../chain/Tokens.ts"
import { erc20Transfer } from "../chain/Erc20.ts"
import {
  COMMISSION_DISPLAY_DECIMALS,
  displayRate,
  divideRounded,
  EFFECTIVE_RATE_DECIMALS,
  formatFixed,
  fromBaseUnits,
  type PayoutAmounts,
  roundHalfUp,
  roundUp,
  toBaseUnits
} from "../money/index.ts"
import { BPS, DEFAULT_SLIPPAGE_BPS, swapFeeUsd } from "../router/SwapMath.ts"
import { NoSwapRoute, type SwapQuote, SwapRouter, SwapRouterUnavailable } from "../router/SwapRouter.ts"

const MAX_ASKS = 4

const ceilDiv = (a: bigint, b: bigint) => (a + b - 1n) / b

/**
 * The sellAmount of COPm whose route delivers at least `needed` USDC base units to `recipient`: the least, when the
 * route can name it (and its own quotes agree), else the first of a few asks that covers `needed`.
 */
export const sizeSwap = (input: {
  readonly copm: TokenInfo
  readonly usdc: TokenInfo
  readonly needed: bigint
  readonly midRate: BigDecimal.BigDecimal
  readonly taker: `0x${string}`
  readonly recipient: `0x${string}`
  readonly slippageBps: number
}) =>
  Effect.gen(function*() {
    const router = yield* SwapRouter
    const route = {
      sellToken: input.copm,
      buyToken: input.usdc,
      taker: input.taker,
      recipient: input.recipient,
      slippageBps: input.slippageBps
    }
    const least = yield* router.leastSellAmount({ ...route, minBuyAmount: input.needed })
    if (Option.isSome(least)) {
      const quote = yield* router.quote({ ...route, sellAmount: least.value })
      const oneUnitLess = least.value > 0n ? yield* router.quote({ ...route, sellAmount: least.value - 1n }) : undefined
      if (quote.minBuyAmount >= input.needed && (oneUnitLess?.minBuyAmount ?? -1n) < input.needed) {
        return { sellAmount: least.value, quote }
      }
      yield* Effect.logWarning("the route's least sellAmount disagrees with its quotes; sizing by asking instead").pipe(
        Effect.annotateLogs({ least: String(least.value), needed: String(input.needed) })
      )
    }
    const neededUsd = fromBaseUnits(input.needed, input.usdc.decimals)
    const atMid = toBaseUnits(
      roundUp(BigDecimal.multiply(neededUsd, input.midRate), input.copm.decimals),
      input.copm.decimals
    )
    let sellAmount = ceilDiv(atMid * BPS, BPS - BigInt(input.slippageBps))
    for (let ask = 0; ask < MAX_ASKS; ask++) {
      const quote: SwapQuote = yield* router.quote({ ...route, sellAmount })
      if (quote.minBuyAmount >= input.needed) return { sellAmount, quote }
      if (quote.minBuyAmount === 0n) break
      sellAmount = ceilDiv(sellAmount * input.needed, quote.minBuyAmount) + (ask === 0 ? 0n : 1n)
    }
    return yield* Effect.fail(new NoSwapRoute({ reason: "the route cannot deliver the deposit from COPm" }))
  })

/** A payout funded from COPm, priced: what the user pays and every leg, before the deposit address is known. */
export interface CopmPrice {
  /** USDC base units the route must deliver: the provider deposit X. */
  readonly needed: bigint
  /** COPm base units the swap sells. */
  readonly sellAmount: bigint
  readonly fees: ReadonlyArray<FeeLeg>
  /** COPm the user pays in all (18 decimals). */
  readonly sourceAmount: string
  /** The service fee in COPm, what `feeTransaction` moves (and confirm verifies). */
  readonly serviceFee: string
  readonly totalPaidUsd: string
  readonly effectiveUsdCop: string
  readonly display: string
  readonly commissionDisplayAmount: string
}

/** A firm quote's COPm no longer buys the deposit on the route (it moved against the user since the quote). */
export class QuotedSwapShort extends Data.TaggedError("QuotedSwapShort")<{
  readonly sellAmount: bigint
  readonly minBuyAmount: bigint
  readonly needed: bigint
}> {}

/**
 * The one pricing of a COPm-funded payout, for `GET quote` and for payout creation alike. `taker` is who would send
 * the swap (the user at creation; a quote has none, so it names the fee wallet: routes price the same for any taker),
 * and the route's output is asked for the taker itself, since the deposit address comes later. A firm quote's
 * `quotedSellAmount` is priced as it is, if the route still delivers X for it.
 */
export const priceFromCopm = (input: {
  readonly copm: TokenInfo
  readonly usdc: TokenInfo
  readonly destinationCop: BigDecimal.BigDecimal
  readonly midRate: BigDecimal.BigDecimal
  readonly amounts: PayoutAmounts
  readonly usdLegs: ReadonlyArray<FeeLeg>
  readonly taker: `0x${string}`
  readonly quotedSellAmount: bigint | undefined
}) =>
  Effect.gen(function*() {
    const needed = toBaseUnits(input.amounts.deposit, input.usdc.decimals)
    const sellAmount = input.quotedSellAmount === undefined
      ? (yield* sizeSwap({
        copm: input.copm,
        usdc: input.usdc,
        needed,
        midRate: input.midRate,
        taker: input.taker,
        recipient: input.taker,
        slippageBps: DEFAULT_SLIPPAGE_BPS
      })).sellAmount
      : yield* stillCovers(input.copm, input.usdc, input.quotedSellAmount, needed, input.taker)
    const swapUsd = swapFeeUsd({
      from: input.copm,
      to: input.usdc,
      amountIn: sellAmount,
      expectedOut: needed,
      midRate: input.midRate
    })
    const feeCopm = roundUp(BigDecimal.multiply(input.amounts.serviceFee, input.midRate), input.copm.decimals)
    const sold = fromBaseUnits(sellAmount, input.copm.decimals)
    const totalPaidUsd = BigDecimal.sumAll([
      input.amounts.deposit,
      input.amounts.serviceFee,
      BigDecimal.fromStringUnsafe(swapUsd)
    ])
    const effective = divideRounded(input.destinationCop, totalPaidUsd, EFFECTIVE_RATE_DECIMALS, "down")
    const commission = BigDecimal.sumAll([
      BigDecimal.fromStringUnsafe(swapUsd),
      input.amounts.providerFee,
      input.amounts.providerFx,
      input.amounts.serviceFee
    ])
    return {
      needed,
      sellAmount,
      fees: [{ code: "swap", amountUsd: swapUsd, to: null, status: "quoted" }, ...input.usdLegs],
      sourceAmount: formatFixed(BigDecimal.sum(sold, feeCopm), input.copm.decimals),
      serviceFee: formatFixed(feeCopm, input.copm.decimals),
      totalPaidUsd: formatFixed(totalPaidUsd, Math.max(input.usdc.decimals, 6)),
      effectiveUsdCop: formatFixed(effective, EFFECTIVE_RATE_DECIMALS),
      display: displayRate(effective),
      commissionDisplayAmount: formatFixed(
        roundHalfUp(commission, COMMISSION_DISPLAY_DECIMALS),
        COMMISSION_DISPLAY_DECIMALS
      )
    } satisfies CopmPrice
  })

const stillCovers = (copm: TokenInfo, usdc: TokenInfo, sellAmount: bigint, needed: bigint, taker: `0x${string}`) =>
  Effect.gen(function*() {
    const router = yield* SwapRouter
    const quote = yield* router.quote({
      sellToken: copm,
      buyToken: usdc,
      sellAmount,
      taker,
      recipient: taker,
      slippageBps: DEFAULT_SLIPPAGE_BPS
    })
    if (quote.minBuyAmount < needed) {
      return yield* Effect.fail(new QuotedSwapShort({ sellAmount, minBuyAmount: quote.minBuyAmount, needed }))
    }
    return sellAmount
  })

/**
 * The transactions of a priced COPm payout, once the provider named its deposit address: the route for the priced
 * sellAmount with its output to that address (asked again, for calldata with that recipient), and the fee in COPm.
 */
export const fundFromCopm = (input: {
  readonly copm: TokenInfo
  readonly usdc: TokenInfo
  readonly price: CopmPrice
  readonly user: `0x${string}`
  readonly depositAddress: `0x${string}`
  readonly feeWallet: string
}) =>
  Effect.gen(function*() {
    const router = yield* SwapRouter
    const quote = yield* router.quote({
      sellToken: input.copm,
      buyToken: input.usdc,
      sellAmount: input.price.sellAmount,
      taker: input.user,
      recipient: input.depositAddress,
      slippageBps: DEFAULT_SLIPPAGE_BPS
    })
    if (quote.minBuyAmount < input.price.needed) {
      return yield* Effect.fail(
        new SwapRouterUnavailable({ reason: "the route moved while the payout was being prepared" })
      )
    }
    return {
      transaction: {
        approvalTarget: quote.allowanceTarget,
        to: quote.transaction.to,
        data: quote.transaction.data,
        value: String(quote.transaction.value)
      },
      feeTransaction: erc20Transfer(
        input.copm.address,
        input.feeWallet,
        toBaseUnits(BigDecimal.fromStringUnsafe(input.price.serviceFee), input.copm.decimals)
      )
    } satisfies { readonly transaction: PreparedTx; readonly feeTransaction: PreparedTx }
  })
