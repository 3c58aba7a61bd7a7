import { getAddress } from "viem"
import type { AppConfigShape } from "../config/Config.ts"

/** The tokens of a deployment's one chain: the USD stablecoin users pay with, and the COP stablecoin of swaps. */
export const TOKEN_SYMBOLS = ["USDC", "COPm"] as const
export type TokenSymbol = typeof TOKEN_SYMBOLS[number]

export interface TokenInfo {
  readonly symbol: TokenSymbol
  readonly chain: string
  readonly address: `0x${string}`
  readonly decimals: number
}

export const isTokenSymbol = (symbol: string): symbol is TokenSymbol => TOKEN_SYMBOLS.some((known) => known === symbol)

/** The token registry from configuration (symbol → address and decimals; live checks the decimals onchain). */
export const tokensFromConfig = (config: AppConfigShape): ReadonlyArray<TokenInfo> => [
  { symbol: "USDC", chain: config.chainName, address: getAddress(config.tokenAddress), decimals: config.tokenDecimals },
  {
    symbol: "COPm",
    chain: config.chainName,
    address: getAddress(config.copTokenAddress),
    decimals: config.copTokenDecimals
  }
]

/** The registry as a lookup; every symbol of TOKEN_SYMBOLS is in it. */
export const tokenLookup = (tokens: ReadonlyArray<TokenInfo>) => (symbol: TokenSymbol): TokenInfo => {
  const found = tokens.find((token) => token.symbol === symbol)
  if (found === undefined) throw new Error(`no token ${symbol} in the registry`)
  return found
}
