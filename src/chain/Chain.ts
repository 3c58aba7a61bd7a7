import type { TxHash } from "@cop-integrations/contracts"
import { Context, Data, Effect, Layer } from "effect"
import type { TokenInfo, TokenSymbol } from "./Tokens.ts"
import { spanWhenTracing } from "../base/Tracing.ts"

/**
 * Why a transfer did not verify: `mismatch` (the receipt shows something else: other sender, no such Transfer, too
 * little), `reverted` (mined, and failed), `not_mined` (no receipt yet), `unconfirmed` (mined, fewer confirmations than required),
 * `unreachable` (the node could not be asked, or did not answer in time). Only `unreachable` is worth asking again
 * at once; the others are answers.
 */
export type NotVerifiedKind = "mismatch" | "reverted" | "not_mined" | "unconfirmed" | "unreachable"

export class DepositNotVerified extends Data.TaggedError("DepositNotVerified")<{
  readonly kind: NotVerifiedKind
  readonly reason: string
}> {}

export type { TokenInfo, TokenSymbol } from "./Tokens.ts"

export interface TransferCheck {
  /** The ERC-20 whose Transfer log counts. */
  readonly token: `0x${string}`
  readonly txHash: string
  /** The user: whose tokens moved (`fromIs: "transfer"`), or who sent the transaction (`"transaction"`). */
  readonly from: string
  readonly to: string
  readonly minAmountBaseUnits: bigint
  /**
   * How the user is recognised. `transfer`: by what moved, the Transfer logs' `from`, whoever sent the transaction
   * (a smart-contract wallet's transaction is sent by a relayer, a bundler or its owner). `transaction` (the default):
   * by the transaction's sender, for a transfer to the user (a swap's output moves from the router).
   */
  readonly fromIs?: "transfer" | "transaction"
}

/** A refund the provider says it sent: `amountBaseUnits` of `token` to `to` (the user) in `txHash`, from anyone. */
export interface RefundCheck {
  readonly token: `0x${string}`
  readonly txHash: string
  readonly to: string
  readonly amountBaseUnits: bigint
}

/** A transaction whose every transfer is read at once (a batch's). */
export interface ReceiptCheck {
  readonly txHash: string
}

/** One ERC-20 Transfer log of a receipt. */
export interface TokenTransfer {
  /** The token contract that logged it. */
  readonly token: string
  readonly from: string
  readonly to: string
  readonly value: bigint
}

export const sameAddress = (a: string, b: string) => a.toLowerCase() === b.toLowerCase()

/** The transfers of `token` to `to` (moved from `from`, when given), and what they add up to. */
export const transfersTo = (
  transfers: ReadonlyArray<TokenTransfer>,
  match: { readonly token: string; readonly to: string; readonly from?: string | undefined }
) => {
  const matching = transfers.filter((transfer) =>
    sameAddress(transfer.token, match.token) && sameAddress(transfer.to, match.to) &&
    (match.from === undefined || sameAddress(transfer.from, match.from))
  )
  // Summed: a batched wallet may split what it moves into several transfers.
  return { matching, moved: matching.reduce((sum, transfer) => sum + transfer.value, 0n) }
}

export interface VerifiedTransfer {
  /** When the block holding the transfer was mined: a deposit mined inside its window counts, even if confirmed late. */
  readonly minedAt: Date
  /**
   * Every ERC-20 Transfer in the verified transaction's receipt (none on the mock chain): another leg of a batch is
   * read from here, not fetched again.
   */
  readonly transfers: ReadonlyArray<TokenTransfer>
  /** Mock mode's chain: there is no block, `minedAt` is the moment of the check (a payout's timeline says so). */
  readonly simulated?: true
}

/** The node could not tell (unreachable, timed out). */
export class ChainUnavailable extends Data.TaggedError("ChainUnavailable")<{ readonly reason: string }> {}

/** The EVM chain: its token registry, onchain verification of users' transfers, and allowances. */
export class Chain extends Context.Service<Chain, {
  readonly tokens: ReadonlyArray<TokenInfo>
  readonly token: (symbol: TokenSymbol) => TokenInfo
  /**
   * The hash a confirm of the payout or swap `resourceId` records for the (lower-case) `txHash` it was sent: live,
   * that hash. Mock mode's chain takes the API reference's example hashes (EXAMPLE_TX_HASHES) for a transaction it
   * mines for that resource, named by a hash of its own, so the examples work for every integration, every time.
   */
  readonly recordedTxHash: (txHash: TxHash, resourceId: string) => TxHash
  readonly verifyTransfer: (check: TransferCheck) => Effect.Effect<VerifiedTransfer, DepositNotVerified>
  /**
   * A refund onchain, as deposits are verified: mined, succeeded, confirmed, with Transfer logs of the token to the
   * user summing to at least the amount. `not_mined` / `unconfirmed` / `unreachable`: not yet; the rest: mismatch.
   */
  readonly verifyRefund: (check: RefundCheck) => Effect.Effect<VerifiedTransfer, DepositNotVerified>
  /**
   * Every ERC-20 Transfer of a transaction (a batch's: several deposits and a fee in one), once it is mined, succeeded
   * and confirmed as a deposit must be; what each transfer is for is the caller's to check. Mock mode's chain has no
   * receipt: mined now, `simulated`, no transfers.
   */
  readonly receiptTransfers: (check: ReceiptCheck) => Effect.Effect<VerifiedTransfer, DepositNotVerified>
  /** What `owner` has approved `spender` to move of `token`, in base units. */
  readonly allowance: (input: {
    readonly token: `0x${string}`
    readonly owner: string
    readonly spender: string
  }) => Effect.Effect<bigint, ChainUnavailable>
}>()("Chain") {}

/**
 * `chain` with a span per RPC-backed call (`Chain.verifyTransfer`, `Chain.verifyRefund`, `Chain.receiptTransfers`,
 * `Chain.allowance`), whichever
 * adapter answers; the token address as an attribute (never the user's address).
 */
export const withChainSpans = (chain: Chain["Service"]): Chain["Service"] => ({
  ...chain,
  verifyTransfer: (check) => span("verifyTransfer", check.token, chain.verifyTransfer(check)),
  verifyRefund: (check) => span("verifyRefund", check.token, chain.verifyRefund(check)),
  receiptTransfers: (check) => spanWhenTracing(chain.receiptTransfers(check), "Chain.receiptTransfers", {}),
  allowance: (input) => span("allowance", input.token, chain.allowance(input))
})

/** The call in its span while tracing is on. */
const span = <A, E>(operation: string, token: string, effect: Effect.Effect<A, E>) =>
  spanWhenTracing(effect, `Chain.${operation}`, { "chain.token": token })

/** The Chain `layer` provides, with its spans (`withChainSpans`). */
export const withChainSpansLayer = <E, R>(layer: Layer.Layer<Chain, E, R>): Layer.Layer<Chain, E, R> =>
  Layer.effect(Chain, Effect.map(Effect.service(Chain), withChainSpans)).pipe(Layer.provide(layer))
