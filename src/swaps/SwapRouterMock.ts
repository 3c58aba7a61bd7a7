import { BigDecimal, Effect, Layer } from "effect"
import { encodeFunctionData, getAddress } from "viem"
import { AppConfig } from "../Config.ts"
import { fromBaseUnits, roundDown, toBaseUnits } from "../money/index.ts"
import { routerAbi } from "./RouterAbi.ts"
import { BPS, midMarketValue, minAmountOut } from "./SwapMath.ts"
import { SwapRouter } from "./SwapRouter.ts"

/**
 * Mock routes: the mid-market value of amountIn at MOCK_USD_COP_MID (1 COPm = 1 COP) less MOCK_SWAP_FEE_BPS, rounded
 * down to the buy token's base units; the transaction calls `swap` on SWAP_ROUTER_ADDRESS. No network.
 */
export const SwapRouterMock = Layer.effect(
  SwapRouter,
  Effect.map(AppConfig, (config) =>
    SwapRouter.of({
      quote: (request) =>
        Effect.sync(() => {
          const amountIn = fromBaseUnits(request.sellAmount, request.sellToken.decimals)
          const fair = midMarketValue({ from: request.sellToken, amountIn, midRate: config.mockMidRate }, request.buyToken.decimals + 6)
          const afterFee = BigDecimal.multiply(fair, BigDecimal.make(BPS - BigInt(config.mockSwapFeeBps), 4))
          const buyAmount = toBaseUnits(roundDown(afterFee, request.buyToken.decimals), request.buyToken.decimals)
          const minBuyAmount = minAmountOut(buyAmount, request.slippageBps)
          const router = getAddress(config.swapRouterAddress)
          return {
            buyAmount,
            minBuyAmount,
            allowanceTarget: router,
            transaction: {
              to: router,
              value: 0n,
              data: encodeFunctionData({
                abi: routerAbi,
                functionName: "swap",
                args: [request.sellToken.address, request.buyToken.address, request.sellAmount, minBuyAmount, request.recipient]
              })
            }
          }
        })
    }))
)
