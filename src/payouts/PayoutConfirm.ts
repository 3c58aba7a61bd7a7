import { PgClient } from "@effect/sql-pg"
import { SqlError } from "effect/sql"
import {
  BadRequest,
  type ConfirmPayoutRequest,
  docsPointer,
  type IntegrationId,
  lowerCaseTxHash,
  NotFound,
  type PayoutId,
  type PayoutStatus,
  type PayoutTimelineHop,
  Requote,
  type TxHash,
  TxHashReused
} from "@cop-integrations/contracts"
import { BigDecimal, Context, Data, Effect, Layer, Option } from "effect"
import { Chain, transfersTo } from "../chain/Chain.ts"
import {
  ConfirmBegun,
  beginOrWait,
  confirmByTxHash,
  type ConfirmReleased,
  type ConfirmStillVerifying,
  keepClaims
} from "../chain/ConfirmByTxHash.ts"
import { isTokenSymbol } from "../chain/Tokens.ts"
import { TxHashClaims } from "../chain/TxHashClaims.ts"
import { type DepositNotMined, type DepositRefused, notVerifiedError, verifyWithRetry } from "../chain/Verification.ts"
import { now } from "../base/Clock.ts"
import { AppConfig } from "../config/Config.ts"
import { toBaseUnits } from "../money/index.ts"
import { acceptsConfirm, confirmByPartner, minedInWindow } from "./Lifecycle.ts"
import { hop, PayoutRepo } from "./PayoutRepo.ts"
import type { PayoutRow } from "./PayoutRow.ts"
import { PayoutChainId, presentPayout } from "./Present.ts"

/** The payout is already confirmed with another txHash. */
export class PayoutAlreadyConfirmed extends Data.TaggedError("PayoutAlreadyConfirmed") {}

/** The payout is in a status (`status`) that no longer takes a confirm. */
export class PayoutNotConfirmable extends Data.TaggedError("PayoutNotConfirmable")<{ readonly status: PayoutStatus }> {}

/** A confirm of this payout with another txHash is being verified. */
export class PayoutConfirmInProgress extends Data.TaggedError("PayoutConfirmInProgress") {}

/** What can refuse a payout's confirm (a 409 each). */
export type PayoutConfirmConflict =
  | PayoutAlreadyConfirmed
  | PayoutNotConfirmable
  | ConfirmStillVerifying
  | PayoutConfirmInProgress
  | ConfirmReleased
  | DepositNotMined
  | DepositRefused

/**
 * The deposit's hop. Mock mode's chain has no block: the check's moment. A block's time is whole seconds by the
 * chain's clock, so it can read as before the payout existed (mined in its first second) or after the confirm that
 * read the block (a clock ahead of ours): the hop is held between the two, so the timeline reads in the order things
 * happened, and the block's own time stays on it as `blockTime`.
 */
const depositMinedHop = (row: PayoutRow, minedAt: Date, confirmedAt: Date, simulated: boolean): PayoutTimelineHop => {
  if (simulated) return hop("deposit_mined", minedAt, "mock_chain")
  const held = Math.min(Math.max(minedAt.getTime(), row.created_at.getTime()), confirmedAt.getTime())
  return { ...hop("deposit_mined", new Date(held), "chain"), blockTime: minedAt.toISOString() }
}

/** A deposit the chain verified for a payout, as its confirm records it. */
export interface VerifiedDeposit {
  readonly txHash: TxHash
  readonly feeTxHash: TxHash | null
  readonly feeStatus: "pending" | "verified"
  readonly minedAt: Date
  /** The chain was mock mode's: `minedAt` is the check's moment, not a block's. */
  readonly simulated: boolean
}

/**
 * A verified deposit recorded on its payout, locked (with whether the provider reported the deposit arriving): refused
 * when the payout no longer takes a confirm, or (409 requote) when it was mined after the deposit window closed and the
 * provider has not seen it.
 */
export const recordDeposit = (
  payouts: PayoutRepo["Service"],
  locked: { readonly row: PayoutRow; readonly depositSeenByProvider: boolean },
  deposit: VerifiedDeposit
) =>
  Effect.gen(function*() {
    const { depositSeenByProvider: seenByProvider, row } = locked
    if (!acceptsConfirm(row, seenByProvider)) {
      return yield* Effect.fail(new PayoutNotConfirmable({ status: row.status }))
    }
    if (!seenByProvider && !minedInWindow(row, deposit.minedAt)) {
      return yield* Effect.fail(
        new Requote({ error: "the deposit window expired before the deposit was mined: create a new payout" })
      )
    }
    const at = yield* now
    return yield* payouts.update(confirmByPartner(row, { ...deposit, at }), {
      source: "api",
      hops: [depositMinedHop(row, deposit.minedAt, at, deposit.simulated)]
    })
  })

/**
 * The partner reports the deposit's txHash (and the fee's), confirmed like a swap's (chain/ConfirmByTxHash): the
 * payout is locked and checked and the hashes claimed `verifying`; the chain verifies the transfers outside any
 * transaction (timeout, bounded retry while unreachable); the claims are kept and the confirmation recorded, or
 * the claims are released.
 */
export class PayoutConfirm extends Context.Service<PayoutConfirm>()("PayoutConfirm", {
  make: Effect.gen(function*() {
    const sql = yield* PgClient.PgClient
    const config = yield* AppConfig
    const chain = yield* Chain
    const payouts = yield* PayoutRepo
    const claims = yield* TxHashClaims
    const chainId = yield* PayoutChainId
    const present = (row: PayoutRow) => presentPayout(row, chainId)

    const claimHash = (hash: TxHash, payoutId: PayoutId) => claims.claim("payout", payoutId, hash)
    const verifyingClaimsOf = (payoutId: PayoutId) => claims.verifyingOf("payout", payoutId)
    const release = (payoutId: PayoutId, hashes: ReadonlyArray<string>) => claims.release("payout", payoutId, hashes)

    const lockOwned = (integrationId: IntegrationId, payoutId: PayoutId) =>
      Effect.flatMap(
        payouts.lockForConfirm(integrationId, payoutId),
        Option.match({
          onNone: () => Effect.fail(new NotFound({ error: `no payout ${payoutId}` })),
          onSome: Effect.succeed
        })
      )

    /** Step 1: lock, check, claim. */
    const begin = (input: {
      readonly integrationId: IntegrationId
      readonly payoutId: PayoutId
      readonly txHash: TxHash
      readonly feeTxHash: TxHash | undefined
    }) =>
      Effect.gen(function*() {
        const { depositSeenByProvider: seenByProvider, row } = yield* lockOwned(input.integrationId, input.payoutId)
        if (row.tx_hash === input.txHash) return ConfirmBegun.Replay({ row })
        if (row.tx_hash !== null) {
          return yield* Effect.fail(new PayoutAlreadyConfirmed())
        }
        // Every claim of this payout is made under its row lock: what this sees is all there is.
        const verifying = yield* verifyingClaimsOf(row.id)
        if (verifying.length > 0) return ConfirmBegun.InProgress({ sameHash: verifying.includes(input.txHash) })
        // The provider's word that the deposit arrived is authoritative (Lifecycle): such a payout may have
        // moved on, and its confirm still records the txHash, whatever the deposit window says. An expired
        // payout is heard too: a deposit mined in time is accepted late (step 3 decides).
        if (!acceptsConfirm(row, seenByProvider)) {
          return yield* Effect.fail(new PayoutNotConfirmable({ status: row.status }))
        }
        // Claim first: a hash that confirms something else (or is being verified for it) is tx_hash_reused
        // whatever its receipt says.
        if (!(yield* claimHash(input.txHash, row.id))) {
          return yield* Effect.fail(
            new TxHashReused({
              error: `txHash already confirms another payout or swap (see ${docsPointer("tx_hash_reused")})`
            })
          )
        }
        if (input.feeTxHash !== undefined && !(yield* claimHash(input.feeTxHash, row.id))) {
          return yield* Effect.fail(
            new TxHashReused({
              error: `feeTxHash already used by another payout or swap (see ${docsPointer("tx_hash_reused")})`
            })
          )
        }
        const hashes = input.feeTxHash === undefined ? [input.txHash] : [input.txHash, input.feeTxHash]
        return ConfirmBegun.Claimed({ row, hashes })
      }).pipe(sql.withTransaction)

    /**
     * Step 2: the chain, outside any transaction. The fee transfer is optional: unverified, its leg stays pending.
     * Without a `feeTxHash`, the deposit's own receipt is searched for it (a `calls` batch: one hash carries both);
     * found, `feeTxHash` is the deposit's hash. Mock mode's chain has no receipt: there the fee needs its own hash.
     */
    const verify = (row: PayoutRow, txHash: TxHash, feeTxHash: TxHash | undefined) => {
      // The provider is paid in USDC (a COPm payout's swap delivers USDC to the deposit address); the service fee is
      // paid in the token the payout is funded from.
      const usdc = chain.token("USDC")
      const feeToken = isTokenSymbol(row.from_token) ? chain.token(row.from_token) : usdc
      const deposit = verifyWithRetry(chain, {
        token: usdc.address,
        txHash,
        from: row.user_address,
        to: row.deposit_address,
        minAmountBaseUnits: toBaseUnits(BigDecimal.fromStringUnsafe(row.deposit_amount), usdc.decimals),
        // A COPm payout's USDC reaches the deposit address from the router its swap calls: the user is the
        // transaction's sender there (smart-contract wallets are recognised for USDC payouts).
        fromIs: row.from_token === "COPm" ? "transaction" : "transfer"
      }).pipe(Effect.mapError((error) => notVerifiedError("txHash", error)))
      const fee = {
        token: feeToken.address,
        from: row.user_address,
        to: config.feeWalletAddress,
        minAmountBaseUnits: toBaseUnits(BigDecimal.fromStringUnsafe(row.service_fee), feeToken.decimals)
      }
      if (feeTxHash !== undefined) {
        const feeIn = verifyWithRetry(chain, { ...fee, txHash: feeTxHash, fromIs: "transfer" }).pipe(
          Effect.match({ onFailure: () => "pending" as const, onSuccess: () => "verified" as const })
        )
        return Effect.map(
          Effect.all([deposit, feeIn], { concurrency: 2 }),
          ([verified, feeStatus]) => ({ verified, feeStatus, feeTxHash })
        )
      }
      // The deposit's own receipt, already read and confirmed, holds a batch's fee transfer too.
      return Effect.map(deposit, (verified) => {
        const { matching, moved } = transfersTo(verified.transfers, fee)
        const feePaid = verified.simulated !== true && matching.length > 0 && moved >= fee.minAmountBaseUnits
        return feePaid
          ? { verified, feeStatus: "verified" as const, feeTxHash: txHash }
          : { verified, feeStatus: "pending" as const, feeTxHash: undefined }
      })
    }

    /** Step 3: record the confirmation, if the claims are still this confirm's and the deposit is in time. */
    const finalize = (input: {
      readonly integrationId: IntegrationId
      readonly payoutId: PayoutId
      readonly hashes: ReadonlyArray<string>
      readonly deposit: VerifiedDeposit
    }) =>
      Effect.gen(function*() {
        const locked = yield* lockOwned(input.integrationId, input.payoutId)
        yield* keepClaims(claims, "payout", locked.row.id, input.hashes)
        return present(yield* recordDeposit(payouts, locked, input.deposit))
      }).pipe(sql.withTransaction)

    const confirm = Effect.fn("PayoutConfirm.confirm")(function*(input: {
      readonly integrationId: IntegrationId
      readonly payoutId: PayoutId
      readonly request: ConfirmPayoutRequest
    }) {
      const sent = lowerCaseTxHash(input.request.txHash)
      const feeSent = input.request.feeTxHash === undefined ? undefined : lowerCaseTxHash(input.request.feeTxHash)
      if (feeSent === sent) {
        return yield* Effect.fail(new BadRequest({ error: "feeTxHash: must differ from txHash" }))
      }
      const txHash = chain.recordedTxHash(sent, input.payoutId)
      const feeTxHash = feeSent === undefined ? undefined : chain.recordedTxHash(feeSent, input.payoutId)
      return yield* confirmByTxHash({
        begin: beginOrWait(
          begin({ integrationId: input.integrationId, payoutId: input.payoutId, txHash, feeTxHash }),
          "payout"
        ),
        inProgress: () => new PayoutConfirmInProgress(),
        replay: present,
        finish: (row, hashes) =>
          Effect.gen(function*() {
            const { feeStatus, feeTxHash: feePaidBy, verified } = yield* verify(row, txHash, feeTxHash)
            return yield* finalize({
              integrationId: input.integrationId,
              payoutId: input.payoutId,
              hashes,
              deposit: {
                txHash,
                feeTxHash: feePaidBy ?? null,
                minedAt: verified.minedAt,
                simulated: verified.simulated === true,
                feeStatus
              }
            })
          }),
        release: (row, hashes) => release(row.id, hashes)
      })
    }, Effect.catchIf(SqlError.isSqlError, Effect.die))

    return { confirm } as const
  })
}) {
  static readonly Default = Layer.effect(this, this.make)
}
