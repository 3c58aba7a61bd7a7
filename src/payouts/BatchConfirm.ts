import { PgClient } from "@effect/sql-pg"
import {
  type ConfirmPayoutBatchRequest,
  docsPointer,
  type ErrorBody,
  type IntegrationId,
  lowerCaseTxHash,
  NotFound,
  type PayoutBatch,
  type PayoutBatchId,
  type TxHash,
  TxHashReused
} from "@cop-integrations/contracts"
import { BigDecimal, Context, Data, Effect, Layer, Option } from "effect"
import { SqlError } from "effect/sql"
import { now } from "../base/Clock.ts"
import { Chain, transfersTo, type VerifiedTransfer } from "../chain/Chain.ts"
import {
  beginOrWait,
  ConfirmBegun,
  confirmByTxHash,
  type ConfirmReleased,
  type ConfirmStillVerifying,
  keepClaims
} from "../chain/ConfirmByTxHash.ts"
import { TxHashClaims } from "../chain/TxHashClaims.ts"
import { type DepositNotMined, DepositRefused, notVerifiedError, withVerifyPolicy } from "../chain/Verification.ts"
import { AppConfig } from "../config/Config.ts"
import { formatFixed, fromBaseUnits, toBaseUnits } from "../money/index.ts"
import { Outbox } from "../outbox/Outbox.ts"
import { type BatchItemRecord, type BatchRow, presentBatch } from "./BatchPresent.ts"
import { BatchRepo } from "./BatchRepo.ts"
import { recordDeposit } from "./PayoutConfirm.ts"
import { PayoutRepo } from "./PayoutRepo.ts"
import type { PayoutRow } from "./PayoutRow.ts"
import { PayoutChainId } from "./Present.ts"
import { quoteReasons } from "./quoteReasons.ts"

/** The batch is already confirmed with another txHash. */
export class PayoutBatchAlreadyConfirmed extends Data.TaggedError("PayoutBatchAlreadyConfirmed") {}

/** A confirm of this batch with another txHash is being verified. */
export class PayoutBatchConfirmInProgress extends Data.TaggedError("PayoutBatchConfirmInProgress") {}

/** What can refuse a batch's confirm (a 409 each). */
export type BatchConfirmConflict =
  | PayoutBatchAlreadyConfirmed
  | PayoutBatchConfirmInProgress
  | ConfirmStillVerifying
  | ConfirmReleased
  | DepositNotMined
  | DepositRefused

/** How many item reasons a refusal of the whole transaction quotes. */

/**
 * A batch confirmed by the one transaction that paid it, as a payout is (chain/ConfirmByTxHash): the batch locked and
 * its hash claimed `verifying`; the receipt read once, outside any transaction; then, in one transaction, every
 * payout of the batch whose deposit transfer is in it in full recorded as a payout's confirm records it
 * (`recordDeposit`: the same window and status rules), the others left awaiting with the reason on their item.
 */
export class BatchConfirm extends Context.Service<BatchConfirm>()("BatchConfirm", {
  make: Effect.gen(function*() {
    const sql = yield* PgClient.PgClient
    const config = yield* AppConfig
    const chain = yield* Chain
    const payouts = yield* PayoutRepo
    const batches = yield* BatchRepo
    const claims = yield* TxHashClaims
    const outbox = yield* Outbox
    const chainId = yield* PayoutChainId
    const usdc = chain.token("USDC")
    const usdcAmount = (units: bigint) => `${formatFixed(fromBaseUnits(units, usdc.decimals), usdc.decimals)} USDC`

    const lockOwned = (integrationId: IntegrationId, batchId: PayoutBatchId) =>
      Effect.flatMap(
        batches.lockOwned(integrationId, batchId),
        Option.match({
          onNone: () => Effect.fail(new NotFound({ error: `no payout batch ${batchId}` })),
          onSome: Effect.succeed
        })
      )

    /** Step 1: lock the batch, check it, claim the hash. */
    const begin = (integrationId: IntegrationId, batchId: PayoutBatchId, txHash: TxHash) =>
      Effect.gen(function*() {
        const batch = yield* lockOwned(integrationId, batchId)
        if (batch.tx_hash === txHash) return ConfirmBegun.Replay({ row: batch })
        if (batch.tx_hash !== null) return yield* Effect.fail(new PayoutBatchAlreadyConfirmed())
        // Every claim of this batch is made under its row lock: what this sees is all there is.
        const verifying = yield* claims.verifyingOf("payout_batch", batch.id)
        if (verifying.length > 0) return ConfirmBegun.InProgress({ sameHash: verifying.includes(txHash) })
        if (!(yield* claims.claim("payout_batch", batch.id, txHash))) {
          return yield* Effect.fail(
            new TxHashReused({
              error: `txHash already confirms another payout, batch or swap (see ${docsPointer("tx_hash_reused")})`
            })
          )
        }
        return ConfirmBegun.Claimed({ row: batch, hashes: [txHash] })
      }).pipe(sql.withTransaction)

    const unitsOf = (amount: string) => toBaseUnits(BigDecimal.fromStringUnsafe(amount), usdc.decimals)

    /**
     * Whether the user's transaction paid each payout awaiting its deposit, and why not. Payouts that share a deposit
     * address (a provider may give one per customer) are paid only together: what reached the address must cover all
     * their deposits, since a transfer cannot be told apart from another to the same address.
     */
    const shortfallsOf = (awaiting: ReadonlyArray<PayoutRow>, receipt: VerifiedTransfer) => {
      const owed = new Map<string, { readonly units: bigint; readonly count: number }>()
      for (const row of awaiting) {
        const address = row.deposit_address.toLowerCase()
        const sum = owed.get(address) ?? { units: 0n, count: 0 }
        owed.set(address, { units: sum.units + unitsOf(row.deposit_amount), count: sum.count + 1 })
      }
      return new Map(awaiting.map((row) => {
        const group = owed.get(row.deposit_address.toLowerCase())!
        const { matching, moved } = transfersTo(receipt.transfers, {
          token: usdc.address,
          to: row.deposit_address,
          from: row.user_address
        })
        // Mock mode's chain has no receipt: its transaction pays every deposit.
        const paid = receipt.simulated === true || (matching.length > 0 && moved >= group.units)
        const deposits = group.count === 1
          ? `its deposit of ${usdcAmount(group.units)}`
          : `the deposits of the ${group.count} payouts of the batch that share it, ${usdcAmount(group.units)}`
        const shortfall = matching.length === 0
          ? `txHash has no USDC transfer from ${row.user_address} to its deposit address ${row.deposit_address}`
          : `txHash transfers ${usdcAmount(moved)} to its deposit address ${row.deposit_address}, less than ${deposits}`
        return [row.id, paid ? null : shortfall] as const
      }))
    }

    /**
     * Step 3: in one transaction (the batch's payouts locked first, then the batch), each payout the transaction paid
     * recorded, the others' reasons written on their items, the batch's hash and its event. Refused whole when it
     * pays none of them (the claim is then released).
     */
    const finalize = (batch: BatchRow, txHash: TxHash, hashes: ReadonlyArray<string>, receipt: VerifiedTransfer) =>
      Effect.gen(function*() {
        const locked = yield* payouts.lockBatch(batch.id)
        const current = yield* batches.lockById(batch.id)
        yield* keepClaims(claims, "payout_batch", batch.id, hashes)
        const simulated = receipt.simulated === true
        const awaiting = locked.filter(({ row }) => row.tx_hash === null)
        const shortfalls = shortfallsOf(awaiting.map(({ row }) => row), receipt)
        const paid = awaiting.filter(({ row }) => shortfalls.get(row.id) === null)
        // The one fee transfer pays the fees of the payouts it confirms; mock mode's chain has none to read.
        const feeOwed = paid.reduce(
          (sum, { row }) => sum + unitsOf(row.service_fee),
          0n
        )
        const feeMoved = transfersTo(receipt.transfers, {
          token: usdc.address,
          to: config.feeWalletAddress,
          from: batch.user_address
        }).moved
        const feePaid = !simulated && feeMoved >= feeOwed
        const deposit = {
          txHash,
          feeTxHash: feePaid ? txHash : null,
          feeStatus: feePaid ? "verified" as const : "pending" as const,
          minedAt: receipt.minedAt,
          simulated
        }

        const depositErrors = new Map<string, ErrorBody>()
        let confirmed = 0
        for (const item of awaiting) {
          const shortfall = shortfalls.get(item.row.id)
          if (shortfall !== null && shortfall !== undefined) {
            depositErrors.set(item.row.id, { error: shortfall })
            continue
          }
          yield* recordDeposit(payouts, item, deposit).pipe(
            Effect.map(() => confirmed++),
            Effect.catchTags({
              PayoutNotConfirmable: ({ status }) =>
                Effect.sync(() =>
                  depositErrors.set(item.row.id, { error: `the payout is ${status} and can no longer be confirmed` })
                ),
              Requote: ({ error }) => Effect.sync(() => depositErrors.set(item.row.id, { error, errorCode: "requote" }))
            })
          )
        }

        const items: ReadonlyArray<BatchItemRecord> = current.items.map((item) => {
          const reason = item.payoutId === null ? undefined : depositErrors.get(item.payoutId)
          return {
            ...item,
            depositError: reason === undefined ? null : { ...reason, error: `items.${item.index}: ${reason.error}` }
          }
        })
        if (confirmed === 0) {
          const reasons = items.flatMap((item) => (item.depositError ? [item.depositError.error] : []))
          return yield* Effect.fail(
            new DepositRefused({
              field: "txHash",
              kind: "mismatch",
              reason: `transaction ${txHash} confirms none of the batch's payouts awaiting their deposit (${
                reasons.length === 0 ? "none is" : quoteReasons(reasons)
              })`
            })
          )
        }
        const at = yield* now
        yield* batches.recordConfirm(batch.id, txHash, items, at)
        const confirmedBatch = presentBatch(
          { ...current, tx_hash: txHash, items, updated_at: at },
          yield* payouts.ofBatch(batch.id),
          chainId
        )
        yield* outbox.record({
          integrationId: batch.integration_id,
          type: "payout_batch.confirmed",
          resourceId: batch.id,
          object: confirmedBatch,
          at
        })
        return confirmedBatch
      }).pipe(sql.withTransaction)

    const present = (batch: BatchRow) =>
      Effect.map(payouts.ofBatch(batch.id), (rows): PayoutBatch => presentBatch(batch, rows, chainId))

    const confirm = Effect.fn("BatchConfirm.confirm")(function*(input: {
      readonly integrationId: IntegrationId
      readonly batchId: PayoutBatchId
      readonly request: ConfirmPayoutBatchRequest
    }) {
      const txHash = chain.recordedTxHash(lowerCaseTxHash(input.request.txHash), input.batchId)
      // A replay is presented as the batch is now; a new confirm answers the batch its transaction wrote.
      const answer = yield* confirmByTxHash({
        begin: beginOrWait(begin(input.integrationId, input.batchId, txHash), "payout batch"),
        inProgress: () => new PayoutBatchConfirmInProgress(),
        replay: present,
        finish: (batch, hashes) =>
          withVerifyPolicy(chain.receiptTransfers({ txHash })).pipe(
            Effect.mapError((error) => notVerifiedError("txHash", error)),
            Effect.flatMap((receipt) => finalize(batch, txHash, hashes, receipt)),
            Effect.map(Effect.succeed)
          ),
        release: (batch, hashes) => claims.release("payout_batch", batch.id, hashes)
      })
      return yield* answer
    }, Effect.catchIf(SqlError.isSqlError, Effect.die))

    return { confirm } as const
  })
}) {
  static readonly Default = Layer.effect(this, this.make)
}
