import { BigDecimal, Effect, Layer } from "effect"
import { encodeFunctionData, getAddress } from "viem"
import { AppConfig } from "../config/Config.ts"
import { fromBaseUnits, roundDown, toBaseUnits } from "../money/index.ts"
import { routerAbi } from "./RouterAbi.ts"
import { BPS, midMarketValue, minAmountOut } from "./SwapMath.ts"
import { type SwapQuote, type SwapQuoteRequest, SwapRouter } from "./SwapRouter.ts"

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

/** Mock routes at MOCK_USD_COP_MID less MOCK_SWAP_FEE_BPS, through SWAP_ROUTER_ADDRESS. No network. */
export const SwapRouterMock = Layer.effect(
  SwapRouter,
  Effect.map(AppConfig, (config) => {
    const route = {
      midRate: config.mockMidRate,
      feeBps: config.mockSwapFeeBps,
      router: getAddress(config.swapRouterAddress)
    }
    return SwapRouter.of({ quote: (request) => Effect.sync(() => mockRouteQuote(route, request)) })
  })
)
