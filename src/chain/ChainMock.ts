import { Clock, Effect, Layer } from "effect"
import { getAddress } from "viem"
import { AppConfig } from "../Config.ts"
import { Chain } from "./Chain.ts"

/** Mock chain: the configured token, and (per the seed) no onchain receipt check. */
export const ChainMock = Layer.effect(
  Chain,
  Effect.map(AppConfig, (config) =>
    Chain.of({
      token: (symbol) => ({
        symbol,
        chain: config.chainName,
        address: getAddress(config.tokenAddress),
        decimals: config.tokenDecimals
      }),
      verifyTransfer: () => Effect.map(Clock.currentTimeMillis, (now) => ({ minedAt: new Date(now) }))
    }))
)
