/**
 * Swap amounts, exact (bigint base units and BigDecimal; never a JavaScript number):
 * - `minAmountOut` = expectedAmountOut × (10000 − slippageBps) / 10000, rounded DOWN in base units of toToken;
 * - the `swap` fee leg = what the user gives up against the mid-market rate M (COP per USD, COPm ≈ 1 COP), in USD:
 *     COPm → USDC: amountIn / M − expectedAmountOut;  USDC → COPm: amountIn − expectedAmountOut / M;
 *   rounded half-up to 6 decimals once, from the exact value (rounding amountIn / M first, to 12 digits, moved a leg
 *   within 5 × 10^-13 USD of a half micro-dollar by one micro-dollar: found by the money check), never below 0 (a
 *   route better than mid-market costs nothing).
 * The mock router's output (see SwapRouterMock) is the mid-market value less its fee, rounded DOWN.
 */
import { BigDecimal } from "effect"
import type { TokenInfo, TokenSymbol } from "../chain/Tokens.ts"
import { divideRounded, formatFixed, fromBaseUnits } from "../money/index.ts"

export const BPS = 10_000n

/**
 * The least amountIn of each token a swap accepts (less is 409 below_minimum). 1 COPm is worth 100 USDC base units or
 * more at any rate under 10,000 COP per USD, so even a 5 % slippage and a route's fee leave a non-zero minAmountOut;
 * 0.000001 COPm (2.5 × 10^-10 USD) bought 0 USDC and the router's answer of 0 was a 502. Any positive USDC amount buys
 * COPm by the 10^12 base units, so USDC's minimum is its smallest unit.
 */
export const MINIMUM_AMOUNT_IN: Readonly<Record<TokenSymbol, BigDecimal.BigDecimal>> = {
  COPm: BigDecimal.fromBigInt(1n),
  USDC: BigDecimal.make(1n, 6)
}
export const DEFAULT_SLIPPAGE_BPS = 50
export const FEE_USD_DECIMALS = 6

export const minAmountOut = (expected: bigint, slippageBps: number): bigint =>
  (expected * (BPS - BigInt(slippageBps))) / BPS

/** amountIn valued in the other token at the mid-market rate (no fee), in whole tokens. */
export const midMarketValue = (
  input: {
    readonly from: TokenInfo
    readonly amountIn: BigDecimal.BigDecimal
    readonly midRate: BigDecimal.BigDecimal
  },
  scale: number
): BigDecimal.BigDecimal =>
  input.from.symbol === "COPm"
    ? divideRounded(input.amountIn, input.midRate, scale, "down")
    : BigDecimal.multiply(input.amountIn, input.midRate)

/** The `swap` fee leg in USD (see the module's comment), rounded once from the exact value. */
export const swapFeeUsd = (input: {
  readonly from: TokenInfo
  readonly to: TokenInfo
  readonly amountIn: bigint
  readonly expectedOut: bigint
  readonly midRate: BigDecimal.BigDecimal
}): string => {
  const amountIn = fromBaseUnits(input.amountIn, input.from.decimals)
  const out = fromBaseUnits(input.expectedOut, input.to.decimals)
  // What the user gives up, times M (exact): COPm → USDC amountIn − out × M; USDC → COPm amountIn × M − out.
  const givenUpTimesMid = input.from.symbol === "COPm"
    ? BigDecimal.subtract(amountIn, BigDecimal.multiply(out, input.midRate))
    : BigDecimal.subtract(BigDecimal.multiply(amountIn, input.midRate), out)
  const fee = BigDecimal.isPositive(givenUpTimesMid)
    ? divideRounded(givenUpTimesMid, input.midRate, FEE_USD_DECIMALS, "halfUp")
    : BigDecimal.fromBigInt(0n)
  return formatFixed(fee, FEE_USD_DECIMALS)
}
