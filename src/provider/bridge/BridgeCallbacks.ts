import { BadRequest, InvalidWebhookSignature, ProviderWebhookEvent } from "@cop-integrations/contracts"
import { Clock, Effect, Layer, Option, Redacted, Result, Schema } from "effect"
import { AppConfig } from "../../config/Config.ts"
import { type ProviderCallback, ProviderCallbacks } from "../ProviderCallbacks.ts"
import { kycStatusOf } from "./KycStatuses.ts"
import { verifyProviderSignature } from "./Signature.ts"
import { bridgeProgress } from "./TransferStates.ts"

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
const TransferReceipt = Schema.Struct({ final_amount: Schema.optional(Schema.NullOr(Schema.String)) })
const decodeReceipt = Schema.decodeUnknownResult(TransferReceipt)

/**
 * The COP amount text a transfer's receipt reports, if any (the lifecycle checks it is an amount). A receipt we
 * cannot read is logged (never its text, which the provider controls) and ignored: the event's state still applies.
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

const decodeEvent = Schema.decodeUnknownResult(Schema.fromJsonString(ProviderWebhookEvent))

/**
 * Bridge's webhooks: `X-Webhook-Signature` checked with the configured public key, then the event envelope
 * (`ProviderWebhookEvent`), then its object: a transfer's state, or a customer's KYC decision.
 */
export const BridgeCallbacks = Layer.effect(
  ProviderCallbacks,
  Effect.gen(function*() {
    const config = yield* AppConfig

    const meaning = (event: ProviderWebhookEvent) =>
      Effect.gen(function*() {
        const { event_category: category, event_id: eventId, event_object: object } = event
        if (category === "transfer") {
          const transfer = Schema.decodeUnknownOption(TransferObject)(object)
          if (Option.isSome(transfer)) {
            const finalAmount = yield* reportedFinalAmount(transfer.value.id, transfer.value.receipt)
            const progress = bridgeProgress({ id: transfer.value.id, state: transfer.value.state, finalAmount })
            return { _tag: "Transfer", eventId, category, progress } satisfies ProviderCallback
          }
        }
        if (category === "customer" || category === "kyc_link") {
          const kyc = Schema.decodeUnknownOption(KycObject)(object)
          if (Option.isSome(kyc)) {
            return {
              _tag: "Kyc",
              eventId,
              category,
              providerCustomerId: "customer_id" in kyc.value ? kyc.value.customer_id : kyc.value.id,
              kycStatus: kycStatusOf(kyc.value.kyc_status)
            } satisfies ProviderCallback
          }
        }
        return { _tag: "Other", eventId, category } satisfies ProviderCallback
      })

    const read = (
      input: { readonly headers: Readonly<Record<string, string | undefined>>; readonly rawBody: string }
    ) =>
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
          header: input.headers["x-webhook-signature"],
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
        return yield* meaning(event.success)
      })

    return ProviderCallbacks.of({ read })
  })
)
