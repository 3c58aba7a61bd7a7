import { EXAMPLE_TX_HASHES, TxHash } from "@cop-integrations/contracts"
import { Clock, Effect, Layer } from "effect"
import { keccak256, stringToHex } from "viem"
import { AppConfig } from "../config/Config.ts"
import { Chain } from "./Chain.ts"
import { tokenLookup, tokensFromConfig } from "./Tokens.ts"

const EXAMPLE_HASHES: ReadonlySet<string> = new Set(Object.values(EXAMPLE_TX_HASHES).map((hash) => hash.toLowerCase()))

/**
 * An example hash, sent to confirm `resourceId`, names the transaction the mock chain mines for it: keccak256 of the
 * example and the resource's id, the same for every confirm of that resource (so the same confirm again is a replay)
 * and another for every other resource (so the hash is one resource's, as a real transaction's is).
 */
export const exampleTransactionHash = (example: TxHash, resourceId: string): TxHash =>
  TxHash.make(keccak256(stringToHex(`${example}:${resourceId}`)))

/**
 * Mock chain: the configured tokens, and (per the seed) no onchain receipt check: a transfer counts as mined now.
 * A refund the mock provider reports verifies the same way. No allowance is known, so an approval is always prepared.
 * The API reference's example hashes stand for a transaction mined for whatever they confirm
 * (`exampleTransactionHash`); every other hash is recorded as sent.
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
      recordedTxHash: (txHash, resourceId) =>
        EXAMPLE_HASHES.has(txHash) ? exampleTransactionHash(txHash, resourceId) : txHash,
      verifyTransfer: () => minedNow,
      // The mock provider's refund transaction is as real as its deposits: it verifies.
      verifyRefund: () => minedNow,
      receiptTransfers: () => minedNow,
      allowance: () => Effect.succeed(0n)
    })
  })
)
