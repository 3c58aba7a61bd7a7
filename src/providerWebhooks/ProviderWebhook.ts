import { PgClient } from "@effect/sql-pg"
import { SqlError } from "effect/sql"
import { BadRequest, InvalidWebhookSignature, type KycStatus, ProviderWebhookEvent } from "@cop-integrations/contracts"
import { Clock, Context, Effect, Layer, Option, Redacted, Result, Schema } from "effect"
import { AppConfig } from "../config/Config.ts"
import { CustomerRepo } from "../kyc/CustomerRepo.ts"
import { Lifecycle } from "../payouts/Lifecycle.ts"
import { ReportedCop } from "../payouts/TotalReceived.ts"
import { ProviderEventRepo } from "./ProviderEventRepo.ts"
import { verifyProviderSignature } from "./Signature.ts"

/** The transfer object: its id and state, and its receipt (read on its own below, so it can never hide the state). */
const TransferObject = Schema.Struct({
  id: Schema.String,
  state: Schema.String,
  receipt: Schema.optional(Schema.Unknown)
})

/**
 * The receipt's `final_amount`: the COP delivered, once the provider knows it (absent before the funds arrive).
 * Every other receipt field is the provider's business and may be missing.
 */
const TransferReceipt = Schema.Struct({ final_amount: Schema.optional(Schema.NullOr(ReportedCop)) })
const decodeReceipt = Schema.decodeUnknownResult(TransferReceipt)

/**
 * The COP amount a transfer's receipt reports, if any. An unreadable receipt or amount is logged (never its
 * text, which the provider controls) and ignored: the event's state still applies.
 */
const reportedFinalAmount = (transferId: string, receipt: unknown) => {
  if (receipt === undefined || receipt === null) return Effect.succeed(null)
  return Result.match(decodeReceipt(receipt), {
    onFailure: () =>
      Effect.as(
        Effect.logWarning("provider transfer event: receipt.final_amount is not a COP amount; ignored").pipe(
          Effect.annotateLogs({ transferId })
        ),
        null
      ),
    onSuccess: (read) => Effect.succeed(read.final_amount ?? null)
  })
}

/**
 * A KYC update, from a `customer` event (the customer: `id`, `kyc_status`) or a `kyc_link` event (the link:
 * `customer_id`, `kyc_status`). Other fields are the provider's business; unknown statuses are tolerated.
 */
const KycObject = Schema.Union([
  Schema.Struct({ customer_id: Schema.String, kyc_status: Schema.String }),
  Schema.Struct({ id: Schema.String, kyc_status: Schema.String })
])

/** The provider's KYC states in ours: approved and rejected are decisions, everything else is still pending. */
const kycStatusOf = (providerStatus: string): KycStatus =>
  providerStatus === "approved" ? "approved" : providerStatus === "rejected" ? "rejected" : "pending"

const decodeEvent = Schema.decodeUnknownResult(Schema.fromJsonString(ProviderWebhookEvent))

/** Provider callbacks: signature first, then de-duplication on `event_id`, then the state change. */
export class ProviderWebhook extends Context.Service<ProviderWebhook>()("ProviderWebhook", {
  make: Effect.gen(function*() {
    const sql = yield* PgClient.PgClient
    const config = yield* AppConfig
    const lifecycle = yield* Lifecycle
    const customers = yield* CustomerRepo
    const providerEvents = yield* ProviderEventRepo

    const receive = (input: { readonly signatureHeader: string | undefined; readonly rawBody: string }) =>
      Effect.gen(function*() {
        const publicKey = Option.map(config.providerWebhookPublicKey, Redacted.value)
        if (Option.isNone(publicKey)) {
          return yield* Effect.fail(
            new InvalidWebhookSignature({
              error: "webhook signature cannot be verified: no provider public key configured"
            })
          )
        }
        const check = verifyProviderSignature({
          header: input.signatureHeader,
          rawBody: input.rawBody,
          publicKeyPem: publicKey.value,
          nowMs: yield* Clock.currentTimeMillis
        })
        if (check._tag === "Invalid") {
          return yield* Effect.fail(
            new InvalidWebhookSignature({ error: `invalid webhook signature: ${check.reason}` })
          )
        }
        const event = decodeEvent(input.rawBody)
        if (Result.isFailure(event)) {
          return yield* Effect.fail(new BadRequest({ error: "webhook body is not a provider event envelope" }))
        }
        const { event_category, event_id, event_object } = event.success
        if (!(yield* providerEvents.recordFirst(event_id, event_category))) {
          return { received: true, duplicate: true } as const
        }
        if (event_category === "transfer") {
          const transfer = Schema.decodeUnknownOption(TransferObject)(event_object)
          if (Option.isSome(transfer)) {
            const finalAmountCop = yield* reportedFinalAmount(transfer.value.id, transfer.value.receipt)
            yield* lifecycle.applyTransferState({
              transferId: transfer.value.id,
              state: transfer.value.state,
              finalAmountCop,
              source: "provider_webhook"
            })
          }
        }
        if (event_category === "customer" || event_category === "kyc_link") {
          const kyc = Schema.decodeUnknownOption(KycObject)(event_object)
          if (Option.isSome(kyc)) {
            const customerId = "customer_id" in kyc.value ? kyc.value.customer_id : kyc.value.id
            const at = new Date(yield* Clock.currentTimeMillis)
            yield* customers.applyProviderKyc(customerId, kycStatusOf(kyc.value.kyc_status), at)
          }
        }
        return { received: true, duplicate: false } as const
      }).pipe(sql.withTransaction, Effect.catchIf(SqlError.isSqlError, Effect.die))

    return { receive } as const
  })
}) {
  static readonly Default = Layer.effect(this, this.make)
}
