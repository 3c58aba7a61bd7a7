import { PgClient } from "@effect/sql-pg"
import { SqlError } from "effect/sql"
import { type IntegrationId, NotFound, type PayoutId, type PayoutStatus } from "@cop-integrations/contracts"
import { Context, Data, Effect, Layer, Option } from "effect"
import { now } from "../base/Clock.ts"
import { TxHashClaims } from "../chain/TxHashClaims.ts"
import { PayoutProvider } from "../provider/PayoutProvider.ts"
import { orProviderFailure } from "../provider/ProviderErrors.ts"
import { moveTo } from "./Lifecycle.ts"
import { PayoutRepo } from "./PayoutRepo.ts"
import type { PayoutRow } from "./PayoutRow.ts"
import { PayoutChainId, presentPayout } from "./Present.ts"

/**
 * The payout can no longer be canceled: it is past `awaiting_deposit` (`status`), the provider already received its
 * deposit, or its deposit was confirmed (or is being confirmed).
 */
export class PayoutNotCancelable extends Data.TaggedError("PayoutNotCancelable")<{
  readonly because: "status" | "deposit_seen" | "deposit_confirmed"
  readonly status: PayoutStatus
}> {}

/** Why a payout can no longer be canceled, or none when it can (awaiting its deposit, none seen or being confirmed). */
const cannotCancel = (
  row: PayoutRow,
  depositSeen: boolean,
  confirming: boolean
): Option.Option<PayoutNotCancelable> => {
  const refused = (because: PayoutNotCancelable["because"]) =>
    Option.some(new PayoutNotCancelable({ because, status: row.status }))
  if (row.status !== "awaiting_deposit") return refused("status")
  if (depositSeen) return refused("deposit_seen")
  if (row.tx_hash !== null || confirming) return refused("deposit_confirmed")
  return Option.none()
}

/**
 * The partner closes a payout's deposit window now (the user abandoned it): the provider's transfer is canceled first,
 * under the payout's lock (a confirm waits for it), then the payout is `expired` with `expiresAt` now, its `expired`
 * hop from `api` and `payout.expired`. Funds that still arrive are not paid out: the provider returns them
 * (Lifecycle: `deposit_after_cancel`). An expired payout answers as it is; one whose deposit was seen is refused.
 */
export class PayoutCancel extends Context.Service<PayoutCancel>()("PayoutCancel", {
  make: Effect.gen(function*() {
    const sql = yield* PgClient.PgClient
    const payouts = yield* PayoutRepo
    const provider = yield* PayoutProvider
    const claims = yield* TxHashClaims
    const chainId = yield* PayoutChainId

    const cancel = Effect.fn("PayoutCancel.cancel")(
      function*(integrationId: IntegrationId, payoutId: PayoutId) {
        const found = yield* payouts.lockForConfirm(integrationId, payoutId)
        if (Option.isNone(found)) return yield* Effect.fail(new NotFound({ error: `no payout ${payoutId}` }))
        const { depositSeenByProvider, row } = found.value
        if (row.status === "expired") return presentPayout(row, chainId)
        const confirming = (yield* claims.verifyingOf("payout", row.id)).length > 0
        const refusal = cannotCancel(row, depositSeenByProvider, confirming)
        if (Option.isSome(refusal)) return yield* Effect.fail(refusal.value)
        yield* orProviderFailure(provider.cancelTransfer(row.provider_transfer_id))
        const at = yield* now
        const canceled = yield* payouts.update(
          { ...moveTo(row, "expired", at), expires_at: at, canceled_at: at },
          { source: "api" }
        )
        return presentPayout(canceled, chainId)
      },
      sql.withTransaction,
      Effect.catchIf(SqlError.isSqlError, Effect.die)
    )

    return { cancel } as const
  })
}) {
  static readonly Default = Layer.effect(this, this.make)
}
