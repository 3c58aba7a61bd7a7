import { Clock, Effect, Layer } from "effect"
import { AppConfig } from "../config/Config.ts"
import { Chain } from "./Chain.ts"
import { tokenLookup, tokensFromConfig } from "./Tokens.ts"

/**
 * Mock chain: the configured tokens, and (per the seed) no onchain receipt check: a transfer counts as mined now.
 * A refund the mock provider reports verifies the same way. No allowance is known, so an approval is always prepared.
 */
const minedNow = Effect.map(
  Clock.currentTimeMillis,
  (now) => ({ minedAt: new Date(now), simulated: true as const, transfers: [] })
)

export const ChainMock = Layer.effect(
  Chain,
  Effect.map(AppConfig, (config) => {
    const tokens = tokensFromConfig(config)
    return Chain.of({
      tokens,
      token: tokenLookup(tokens),
      verifyTransfer: () => minedNow,
      // The mock provider's refund transaction is as real as its deposits: it verifies.
      verifyRefund: () => minedNow,
      allowance: () => Effect.succeed(0n)
    })
  })
)
