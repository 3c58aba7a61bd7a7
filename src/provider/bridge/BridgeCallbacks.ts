import { BadRequest, InvalidWebhookSignature, ProviderWebhookEvent } from "@cop-integrations/contracts"
import { Clock, Effect, Layer, Option, Redacted, Result, Schema } from "effect"
import { AppConfig } from "../../config/Config.ts"
import { type ProviderCallback, ProviderCallbacks } from "../ProviderCallbacks.ts"
import { kycStatusOf } from "./KycStatuses.ts"
import { verifyProviderSignature } from "./Signature.ts"
import { progressOfTransfer, TransferObject } from "./TransferObject.ts"

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
            const progress = yield* progressOfTransfer(transfer.value)
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
