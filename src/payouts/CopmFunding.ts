/**
 * A payout funded from the COP stablecoin (`fromToken: "COPm"`), for a user who holds only COPm. The provider is
 * still paid X USDC (DESIGN §3's formulas, unchanged); the user's one signed `transaction` is the router swap whose
 * output goes straight to the provider's deposit address and whose minAmountOut is at least X. Exact rules:
 * - sellAmount: the least COPm (18 decimals) whose route's minBuyAmount ≥ X, found by asking the router: a first
 *   guess X × M / (1 − slippage) rounded up, then scaled by X / minBuyAmount (rounded up) until it covers X (at most
 *   four asks);
 * - `swap` leg (USD) = sellAmount / M − X, rounded half-up to 6 decimals, never below 0: what the route and the
 *   slippage headroom cost against mid-market (the headroom, when not used, reaches the provider as extra USDC);
 * - the service fee F (USD, as for USDC) is paid in COPm: F × M rounded UP to 18 decimals (`feeTransaction`);
 * - sourceAmount (COPm) = sellAmount + the COPm fee; receipt.totalPaid (USD) = X + F + swap leg;
 *   effectiveUsdCop = D / totalPaid rounded down to 6 decimals, display to 2; commission = the sum of the four legs.
 */
import type { FeeLeg, PreparedTx } from "@cop-integrations/contracts"
import { BigDecimal, Effect } from "effect"
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
import { BPS, DEFAULT_SLIPPAGE_BPS, swapFeeUsd } from "../swaps/SwapMath.ts"
import { NoSwapRoute, type SwapQuote, SwapRouter } from "../swaps/SwapRouter.ts"

const MAX_ASKS = 4

const ceilDiv = (a: bigint, b: bigint) => (a + b - 1n) / b

/** The least sellAmount of COPm whose route delivers at least `needed` USDC base units to `recipient`. */
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
    const neededUsd = fromBaseUnits(input.needed, input.usdc.decimals)
    const atMid = toBaseUnits(roundUp(BigDecimal.multiply(neededUsd, input.midRate), input.copm.decimals), input.copm.decimals)
    let sellAmount = ceilDiv(atMid * BPS, BPS - BigInt(input.slippageBps))
    for (let ask = 0; ask < MAX_ASKS; ask++) {
      const quote: SwapQuote = yield* router.quote({
        sellToken: input.copm,
        buyToken: input.usdc,
        sellAmount,
        taker: input.taker,
        recipient: input.recipient,
        slippageBps: input.slippageBps
      })
      if (quote.minBuyAmount >= input.needed) return { sellAmount, quote }
      if (quote.minBuyAmount === 0n) break
      sellAmount = ceilDiv(sellAmount * input.needed, quote.minBuyAmount) + (ask === 0 ? 0n : 1n)
    }
    return yield* Effect.fail(new NoSwapRoute({ reason: "the route cannot deliver the deposit from COPm" }))
  })

export interface CopmFunding {
  readonly transaction: PreparedTx
  readonly feeTransaction: PreparedTx
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

export const fundFromCopm = (input: {
  readonly copm: TokenInfo
  readonly usdc: TokenInfo
  readonly destinationCop: BigDecimal.BigDecimal
  readonly midRate: BigDecimal.BigDecimal
  readonly amounts: PayoutAmounts
  readonly usdLegs: ReadonlyArray<FeeLeg>
  readonly user: `0x${string}`
  readonly depositAddress: `0x${string}`
  readonly feeWallet: string
}) =>
  Effect.gen(function*() {
    const needed = toBaseUnits(input.amounts.deposit, input.usdc.decimals)
    const { quote, sellAmount } = yield* sizeSwap({
      copm: input.copm,
      usdc: input.usdc,
      needed,
      midRate: input.midRate,
      taker: input.user,
      recipient: input.depositAddress,
      slippageBps: DEFAULT_SLIPPAGE_BPS
    })
    const swapUsd = swapFeeUsd({ from: input.copm, to: input.usdc, amountIn: sellAmount, expectedOut: needed, midRate: input.midRate })
    const feeCopm = roundUp(BigDecimal.multiply(input.amounts.serviceFee, input.midRate), input.copm.decimals)
    const sold = fromBaseUnits(sellAmount, input.copm.decimals)
    const totalPaidUsd = BigDecimal.sumAll([input.amounts.deposit, input.amounts.serviceFee, BigDecimal.unsafeFromString(swapUsd)])
    const effective = divideRounded(input.destinationCop, totalPaidUsd, EFFECTIVE_RATE_DECIMALS, "down")
    const commission = BigDecimal.sumAll([
      BigDecimal.unsafeFromString(swapUsd),
      input.amounts.providerFee,
      input.amounts.providerFx,
      input.amounts.serviceFee
    ])
    return {
      transaction: {
        approvalTarget: quote.allowanceTarget,
        to: quote.transaction.to,
        data: quote.transaction.data,
        value: String(quote.transaction.value)
      },
      feeTransaction: erc20Transfer(input.copm.address, input.feeWallet, toBaseUnits(feeCopm, input.copm.decimals)),
      fees: [{ code: "swap", amountUsd: swapUsd, to: null, status: "quoted" }, ...input.usdLegs],
      sourceAmount: formatFixed(BigDecimal.sum(sold, feeCopm), input.copm.decimals),
      serviceFee: formatFixed(feeCopm, input.copm.decimals),
      totalPaidUsd: formatFixed(totalPaidUsd, Math.max(input.usdc.decimals, 6)),
      effectiveUsdCop: formatFixed(effective, EFFECTIVE_RATE_DECIMALS),
      display: displayRate(effective),
      commissionDisplayAmount: formatFixed(roundHalfUp(commission, COMMISSION_DISPLAY_DECIMALS), COMMISSION_DISPLAY_DECIMALS)
    } satisfies CopmFunding
  })
