import { BigDecimal, Effect, Layer, Option } from "effect"
import { encodeFunctionData, getAddress } from "viem"
import { AppConfig } from "../config/Config.ts"
import { fromBaseUnits, roundDown, toBaseUnits } from "../money/index.ts"
import { routerAbi } from "./RouterAbi.ts"
import { BPS, midMarketValue, minAmountOut } from "./SwapMath.ts"
import { type LeastSellRequest, type SwapQuote, type SwapQuoteRequest, SwapRouter } from "./SwapRouter.ts"

/**
 * The mock route's answer, a pure function: the mid-market value of amountIn at `midRate` (1 COPm = 1 COP) less
 * `feeBps`, rounded down to the buy token's base units; the transaction calls `swap` on `router`. (The money check
 * prices COPm payouts through it at each case's rates.)
 */
export const mockRouteQuote = (
  route: { readonly midRate: BigDecimal.BigDecimal; readonly feeBps: number; readonly router: `0x${string}` },
  request: SwapQuoteRequest
): SwapQuote => {
  const amountIn = fromBaseUnits(request.sellAmount, request.sellToken.decimals)
  const fair = midMarketValue(
    { from: request.sellToken, amountIn, midRate: route.midRate },
    request.buyToken.decimals + 6
  )
  const afterFee = BigDecimal.multiply(fair, BigDecimal.make(BPS - BigInt(route.feeBps), 4))
  const buyAmount = toBaseUnits(roundDown(afterFee, request.buyToken.decimals), request.buyToken.decimals)
  const minBuyAmount = minAmountOut(buyAmount, request.slippageBps)
  return {
    buyAmount,
    minBuyAmount,
    allowanceTarget: route.router,
    transaction: {
      to: route.router,
      value: 0n,
      data: encodeFunctionData({
        abi: routerAbi,
        functionName: "swap",
        args: [request.sellToken.address, request.buyToken.address, request.sellAmount, minBuyAmount, request.recipient]
      })
    }
  }
}

const pow10 = (exponent: number) => 10n ** BigInt(exponent)
const ceilDiv = (a: bigint, b: bigint) => (a + b - 1n) / b

/** a × 10^exponent / b, rounded up (a, b ≥ 0; the exponent of either sign). */
const ceilScaled = (a: bigint, exponent: number, b: bigint) =>
  exponent >= 0 ? ceilDiv(a * pow10(exponent), b) : ceilDiv(a, b * pow10(-exponent))

/**
 * The exact inverse of `mockRouteQuote`: the least sellAmount whose minBuyAmount is at least `minBuyAmount`. Each of
 * the quote's floors is undone in turn, last first, by the ceiling of its exact quotient: the least buyAmount the
 * slippage leaves it at; the least mid-market value (in 10^-(buy decimals + 6) units, COPm → USDC) the fee leaves
 * that at; the least amountIn worth that at `midRate`.
 */
export const mockRouteLeastSell = (
  route: { readonly midRate: BigDecimal.BigDecimal; readonly feeBps: number },
  request: LeastSellRequest
): bigint => {
  const keptBySlippage = BPS - BigInt(request.slippageBps)
  const keptByFee = BPS - BigInt(route.feeBps)
  const buyAmount = ceilDiv(request.minBuyAmount * BPS, keptBySlippage)
  const { scale: midScale, value: midValue } = route.midRate
  const sellDecimals = request.sellToken.decimals
  const buyDecimals = request.buyToken.decimals
  if (request.sellToken.symbol === "COPm") {
    // fair = floor(amountIn / M) in 10^-(buyDecimals + 6) units; buyAmount = floor(fair × keptByFee / (BPS × 10^6))
    const fair = ceilDiv(buyAmount * BPS * pow10(6), keptByFee)
    // sellAmount × 10^(midScale − sellDecimals + buyDecimals + 6) / midValue ≥ fair
    return ceilScaled(fair * midValue, sellDecimals - midScale - buyDecimals - 6, 1n)
  }
  // buyAmount = floor(sellAmount × midValue × keptByFee × 10^buyDecimals / (10^(sellDecimals + midScale) × BPS))
  return ceilScaled(buyAmount * BPS, sellDecimals + midScale - buyDecimals, midValue * keptByFee)
}

/** The mock route as the SwapRouter port: quotes and their exact inverse, pure functions of `route`. */
export const mockRouter = (
  route: { readonly midRate: BigDecimal.BigDecimal; readonly feeBps: number; readonly router: `0x${string}` }
) =>
  SwapRouter.of({
    quote: (request) => Effect.sync(() => mockRouteQuote(route, request)),
    leastSellAmount: (request) => Effect.sync(() => Option.some(mockRouteLeastSell(route, request)))
  })

/** Mock routes at MOCK_USD_COP_MID less MOCK_SWAP_FEE_BPS, through SWAP_ROUTER_ADDRESS. No network. */
export const SwapRouterMock = Layer.effect(
  SwapRouter,
  Effect.map(AppConfig, (config) =>
    mockRouter({
      midRate: config.mockMidRate,
      feeBps: config.mockSwapFeeBps,
      router: getAddress(config.swapRouterAddress)
    }))
)
