import { Context, Data, type Effect } from "effect"

/**
 * Why a transfer did not verify: `mismatch` (the receipt shows something else: reverted, other sender, no such
 * Transfer, too little), `not_mined` (no receipt yet), `unconfirmed` (mined, fewer confirmations than required),
 * `unreachable` (the node could not be asked, or did not answer in time). Only `unreachable` is worth asking again
 * at once; the others are answers.
 */
export type NotVerifiedKind = "mismatch" | "not_mined" | "unconfirmed" | "unreachable"

export class DepositNotVerified extends Data.TaggedError("DepositNotVerified")<{
  readonly kind: NotVerifiedKind
  readonly reason: string
}> {}

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
