import { Context, Data, type Effect } from "effect"

export class DepositNotVerified extends Data.TaggedError("DepositNotVerified")<{ readonly reason: string }> {}

export interface TokenInfo {
  readonly symbol: string
  readonly chain: string
  readonly address: `0x${string}`
  readonly decimals: number
}

export interface TransferCheck {
  readonly txHash: string
  readonly from: string
  readonly to: string
  readonly minAmountBaseUnits: bigint
}

export interface VerifiedTransfer {
  /** When the block holding the transfer was mined: a deposit mined inside its window counts, even if confirmed late. */
  readonly minedAt: Date
}

/** The EVM chain: the token users pay with, and onchain verification of their transfers. */
export class Chain extends Context.Tag("Chain")<Chain, {
  readonly token: (symbol: string) => TokenInfo
  readonly verifyTransfer: (check: TransferCheck) => Effect.Effect<VerifiedTransfer, DepositNotVerified>
}>() {}
