import { PgClient } from "@effect/sql-pg"
import { SqlError } from "@effect/sql/SqlError"
import { BadRequest, Conflict, type ConfirmPayoutRequest, NotFound, Requote, TxHashReused } from "@cop-integrations/contracts"
import { BigDecimal, Effect, Option } from "effect"
import { Chain } from "../chain/Chain.ts"
import { now } from "../Clock.ts"
import { AppConfig } from "../Config.ts"
import { toBaseUnits } from "../money/index.ts"
import { PayoutProvider } from "../provider/PayoutProvider.ts"
import { acceptsConfirm, confirmByPartner } from "./Lifecycle.ts"
import { PayoutRepo } from "./PayoutRepo.ts"
import { presentPayout } from "./Present.ts"
import { RequoteGuard } from "./RequoteGuard.ts"

/** The partner reports the deposit's txHash: claim the hash, verify the transfer onchain, record it. */
export class PayoutConfirm extends Effect.Service<PayoutConfirm>()("PayoutConfirm", {
  effect: Effect.gen(function*() {
    const sql = yield* PgClient.PgClient
    const config = yield* AppConfig
    const provider = yield* PayoutProvider
    const chain = yield* Chain
    const payouts = yield* PayoutRepo
    const requoteGuard = yield* RequoteGuard

    const requote = (error: string) => Effect.fail(new Requote({ error }))

    const claimHash = (hash: string, payoutId: string) =>
      Effect.map(
        sql`INSERT INTO tx_hash_claims (tx_hash, resource_kind, resource_id) VALUES (${hash}, 'payout', ${payoutId})
            ON CONFLICT DO NOTHING RETURNING tx_hash`,
        (rows) => rows.length === 1
      )

    const confirm = (input: {
      readonly integrationId: string
      readonly payoutId: string
      readonly request: ConfirmPayoutRequest
    }) =>
      Effect.gen(function*() {
        const txHash = input.request.txHash.toLowerCase()
        const feeTxHash = input.request.feeTxHash?.toLowerCase()
        if (feeTxHash === txHash) {
          return yield* Effect.fail(new BadRequest({ error: "feeTxHash: must differ from txHash" }))
        }
        const found = yield* payouts.lockOwned(input.integrationId, input.payoutId)
        if (Option.isNone(found)) return yield* Effect.fail(new NotFound({ error: `no payout ${input.payoutId}` }))
        const row = found.value
        if (row.tx_hash === txHash) return presentPayout(row)
        if (row.tx_hash !== null) {
          return yield* Effect.fail(new Conflict({ error: "this payout is already confirmed with a different txHash" }))
        }
        // The expiry sweep may already have marked the window closed: still `requote` (DESIGN §3).
        if (row.status === "expired") {
          return yield* requote("the deposit window expired before confirmation: create a new payout")
        }
        // The provider's word that the deposit arrived is authoritative (Lifecycle): such a payout may have
        // moved on, and its confirm still records the txHash, whatever the deposit window says.
        const seenByProvider = yield* payouts.depositSeenByProvider(row.id)
        if (!acceptsConfirm(row, seenByProvider)) {
          return yield* Effect.fail(new Conflict({ error: `this payout is ${row.status} and can no longer be confirmed` }))
        }
        const at = yield* now
        yield* requoteGuard.beforeConfirm
        if (!seenByProvider && row.expires_at.getTime() <= at.getTime()) {
          return yield* requote("the deposit window expired before confirmation: create a new payout")
        }
        // Claim first: a hash that confirms something else is tx_hash_reused whatever its receipt says. A
        // failed verification rolls the claim back with the transaction.
        if (!(yield* claimHash(txHash, row.id))) {
          return yield* Effect.fail(new TxHashReused({ error: "txHash already confirms another payout or swap" }))
        }
        const token = chain.token(row.from_token)
        yield* chain.verifyTransfer({
          txHash,
          from: row.user_address,
          to: row.deposit_address,
          minAmountBaseUnits: toBaseUnits(BigDecimal.unsafeFromString(row.deposit_amount), token.decimals)
        }).pipe(Effect.catchTag("DepositNotVerified", (e) => Effect.fail(new Conflict({ error: `txHash: ${e.reason}` }))))
        let feeStatus: "pending" | "verified" = "pending"
        if (feeTxHash !== undefined) {
          if (!(yield* claimHash(feeTxHash, row.id))) {
            return yield* Effect.fail(new TxHashReused({ error: "feeTxHash already used by another payout or swap" }))
          }
          const feeVerified = yield* Effect.either(chain.verifyTransfer({
            txHash: feeTxHash,
            from: row.user_address,
            to: config.feeWalletAddress,
            minAmountBaseUnits: toBaseUnits(BigDecimal.unsafeFromString(row.service_fee), token.decimals)
          }))
          feeStatus = feeVerified._tag === "Right" ? "verified" : "pending"
        }
        const confirmed = yield* payouts.update(
          confirmByPartner(row, { txHash, feeTxHash: feeTxHash ?? null, feeStatus, at })
        )
        yield* provider.depositConfirmed({ transferId: row.provider_transfer_id, at })
        return presentPayout(confirmed)
      }).pipe(sql.withTransaction, Effect.catchIf((e): e is SqlError => e instanceof SqlError, Effect.die))

    return { confirm } as const
  })
}) {}
