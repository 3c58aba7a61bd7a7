import {
  BadRequest,
  type CreatePayoutRequest,
  type DestinationPreviewResult,
  type IntegrationId,
  NeedsKyc,
  PreviewId,
  type PreviewDestinationRequest
} from "@cop-integrations/contracts"
import { Context, Effect, Layer, Option } from "effect"
import { addSeconds, now } from "../base/Clock.ts"
import { newInternalId } from "../base/ids.ts"
import { CustomerKyc } from "../kyc/CustomerKyc.ts"
import { providerIdempotencyKey } from "../provider/IdempotencyKeys.ts"
import { type ExternalAccount, PayoutProvider } from "../provider/PayoutProvider.ts"
import { orProviderFailure } from "../provider/ProviderErrors.ts"
import { maskBreBKey } from "./BreBKeyMask.ts"
import { type PreviewRow, PreviewRepo } from "./PreviewRepo.ts"
import { VerificationBudget } from "./VerificationBudget.ts"

/** How long a `previewId` can be given to payout creation. */
const PREVIEW_TTL_SECONDS = 15 * 60

const present = (row: PreviewRow): DestinationPreviewResult => ({
  previewId: row.id,
  match: row.match,
  destinationPreview: row.match
    ? {
      accountOwnerName: row.verified_owner_name ?? row.account_owner_name,
      bankName: row.bank_name,
      documentLast4: row.document_last4
    }
    : null,
  expiresAt: row.expires_at.toISOString()
})

/** The provider's answer for a preview, as the payout would have had it. */
const destinationOf = (row: PreviewRow): ExternalAccount =>
  row.match && row.external_account_id !== null
    ? {
      _tag: "Verified",
      externalAccountId: row.external_account_id,
      accountOwnerName: row.verified_owner_name ?? row.account_owner_name,
      bankName: row.bank_name,
      documentLast4: row.document_last4
    }
    : { _tag: "OwnerMismatch" }

/** The destination a preview verified, else what `register` answers (run only then). */
export const previewedOr = <E, R>(
  previewed: Option.Option<ExternalAccount>,
  register: Effect.Effect<ExternalAccount, E, R>
): Effect.Effect<ExternalAccount, E, R> => Option.isSome(previewed) ? Effect.succeed(previewed.value) : register

const refuse = (error: string) => Effect.fail(new BadRequest({ error: `previewId: ${error}` }))

/**
 * Payee preview: the provider's external-account verification of a Bre-B key and holder name before any money moves,
 * kept for a while so the payout that follows reuses the verified destination instead of registering it again.
 */
export class DestinationPreviews extends Context.Service<DestinationPreviews>()("DestinationPreviews", {
  make: Effect.gen(function*() {
    const provider = yield* PayoutProvider
    const customerKyc = yield* CustomerKyc
    const previews = yield* PreviewRepo
    const budget = yield* VerificationBudget

    /** The provider customer the destination is registered under: the user's, once their KYC is approved. */
    const customerFor = (integrationId: IntegrationId, userAddress: string | undefined) => {
      if (userAddress !== undefined) return customerKyc.approvedCustomerId(integrationId, userAddress)
      if (!provider.destinationsPerCustomer) return Effect.succeed(null)
      return Effect.fail(
        new NeedsKyc({
          error:
            "userAddress: the provider registers destinations under the user's KYC customer; send the userAddress of a KYC-approved user"
        })
      )
    }

    /**
     * The provider's external account for a Bre-B key and holder name, registered under `customerId`. Its provider
     * idempotency key is the same for a preview and the payout that follows, so the provider answers both with the
     * same account. Every call spends a token of the integration's verification budget (429 when none is left): it
     * is the one way to the provider's verification, so every path that verifies is limited alike.
     */
    const registerDestination = Effect.fn("DestinationPreviews.registerDestination")(function*(
      integrationId: IntegrationId,
      destination: {
        readonly userAddress?: string | undefined
        readonly breBKey: string
        readonly accountOwnerName: string
      },
      customerId: string | null
    ) {
      return yield* budget.spending(
        integrationId,
        orProviderFailure(provider.createExternalAccount({
          idempotencyKey: providerIdempotencyKey(
            "external_account",
            customerId ?? `${integrationId}:${destination.userAddress?.toLowerCase() ?? "preview"}`,
            destination.breBKey,
            destination.accountOwnerName
          ),
          customerId,
          breBKey: destination.breBKey,
          accountOwnerName: destination.accountOwnerName
        }))
      )
    })

    const preview = Effect.fn("DestinationPreviews.preview")(
      function*(integrationId: IntegrationId, request: PreviewDestinationRequest) {
        const customerId = yield* customerFor(integrationId, request.userAddress)
        const account = yield* registerDestination(integrationId, request, customerId)
        const at = yield* now
        const verified = account._tag === "Verified" ? account : undefined
        const row: PreviewRow = {
          id: PreviewId.make(newInternalId("pv")),
          integration_id: integrationId,
          bre_b_key: request.breBKey,
          account_owner_name: request.accountOwnerName,
          user_address: request.userAddress?.toLowerCase() ?? null,
          match: verified !== undefined,
          external_account_id: verified?.externalAccountId ?? null,
          verified_owner_name: verified?.accountOwnerName ?? null,
          bank_name: verified?.bankName ?? null,
          document_last4: verified?.documentLast4 ?? null,
          created_at: at,
          expires_at: addSeconds(at, PREVIEW_TTL_SECONDS)
        }
        yield* previews.insert(row)
        yield* Effect.logInfo("destination previewed").pipe(
          Effect.annotateLogs({ previewId: row.id, breBKey: maskBreBKey(request.breBKey), match: row.match })
        )
        return present(row)
      }
    )

    /**
     * The destination a payout's `previewId` verified, if it names one: none without a `previewId`; a 400 naming
     * `previewId` when it is not this integration's, has expired, or was for another key, name or user.
     */
    const destinationFor = Effect.fn("DestinationPreviews.destinationFor")(function*(
      integrationId: IntegrationId,
      request: CreatePayoutRequest
    ): Effect.fn.Return<Option.Option<ExternalAccount>, BadRequest> {
      if (request.previewId === undefined) return Option.none()
      const found = yield* previews.findOwned(integrationId, request.previewId)
      if (Option.isNone(found)) return yield* refuse("no such preview for this integration")
      const row = found.value
      if (row.expires_at.getTime() <= (yield* now).getTime()) {
        return yield* refuse(`the preview expired at ${row.expires_at.toISOString()}; preview the destination again`)
      }
      if (row.bre_b_key !== request.breBKey || row.account_owner_name !== request.accountOwnerName) {
        return yield* refuse(
          "the preview was for another breBKey or accountOwnerName; send the previewed ones or preview again"
        )
      }
      if (row.user_address !== null && row.user_address !== request.userAddress.toLowerCase()) {
        return yield* refuse("the preview was for another userAddress; send the previewed one or preview again")
      }
      return Option.some(destinationOf(row))
    })

    return { preview, destinationFor, registerDestination } as const
  })
}) {
  static readonly Default = Layer.effect(this, this.make)
}
