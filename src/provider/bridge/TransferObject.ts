import { Effect, Option, Result, Schema } from "effect"
import { TxHash } from "@cop-integrations/contracts"
import type { TransferProgress } from "../TransferProgress.ts"
import { bridgeProgress } from "./TransferStates.ts"

/**
 * Bridge's transfer object, the parts we read: its id and state (required), and, each read on its own so that none can
 * hide the state, its receipt, why it was returned and the refund.
 */
export const TransferObject = Schema.Struct({
  id: Schema.String,
  state: Schema.String,
  receipt: Schema.optional(Schema.Unknown),
  return_details: Schema.optional(Schema.Unknown),
  refund: Schema.optional(Schema.Unknown)
})
export type TransferObject = typeof TransferObject.Type

/** The receipt's `final_amount`: the COP delivered, once Bridge knows it (absent before the funds arrive). */
const Receipt = Schema.Struct({ final_amount: Schema.optional(Schema.NullOr(Schema.String)) })
/** `return_details.reason`: why Bridge could not deliver or sent the payment back. */
const ReturnDetails = Schema.Struct({ reason: Schema.optional(Schema.NullOr(Schema.String)) })
/** `refund`: what Bridge sends back to the deposit's sender (whole USDC) and its transaction, once sent. */
const Refund = Schema.Struct({
  amount: Schema.optional(Schema.NullOr(Schema.String.check(Schema.isPattern(/^[0-9]+(\.[0-9]+)?$/)))),
  tx_hash: Schema.optional(Schema.NullOr(TxHash))
})

/**
 * One optional part of the transfer, decoded; a part we cannot read is logged (never its text, which the provider
 * controls) and ignored: the transfer's state still applies.
 */
const part = <A>(transferId: string, problem: string, schema: Schema.Decoder<A>, value: unknown) => {
  if (value === undefined || value === null) return Effect.succeed(Option.none<A>())
  return Result.match(Schema.decodeUnknownResult(schema)(value), {
    onFailure: () =>
      Effect.as(
        Effect.logWarning(`provider transfer: ${problem}; ignored`).pipe(
          Effect.annotateLogs({ transferId })
        ),
        Option.none<A>()
      ),
    onSuccess: (read) => Effect.succeed(Option.some(read))
  })
}

/** A Bridge transfer object in payout terms. */
export const progressOfTransfer = (transfer: TransferObject): Effect.Effect<TransferProgress> =>
  Effect.gen(function*() {
    const receipt = yield* part(transfer.id, "receipt.final_amount is not a COP amount", Receipt, transfer.receipt)
    const returned = yield* part(transfer.id, "return_details is not readable", ReturnDetails, transfer.return_details)
    const refund = yield* part(transfer.id, "refund is not readable", Refund, transfer.refund)
    return bridgeProgress({
      id: transfer.id,
      state: transfer.state,
      finalAmount: Option.getOrUndefined(receipt)?.final_amount,
      returnReason: Option.getOrUndefined(returned)?.reason,
      refund: Option.map(refund, (read) => ({ amount: read.amount ?? null, txHash: read.tx_hash ?? null })).pipe(
        Option.getOrNull
      )
    })
  })
