import { Schema } from "effect"
import { DESTINATION_PREVIEW_EXAMPLE } from "./Examples.ts"
import { PreviewId } from "./Ids.ts"
import { Address, BreBKey, IsoTimestamp, NonEmptyText } from "./Primitives.ts"

/** A `previewId` as a request names it (`pv_…`): given to payout creation, it reuses the verified destination. */
export const PreviewIdInput = NonEmptyText(64).pipe(Schema.brand("PreviewId"))

/** The Bre-B destination as the provider verified it: the holder's name as their bank shows it, bank, document. */
export const DestinationPreview = Schema.Struct({
  accountOwnerName: Schema.String,
  bankName: Schema.NullOr(Schema.String),
  documentLast4: Schema.NullOr(Schema.String)
})
export type DestinationPreview = typeof DestinationPreview.Type

export const PreviewDestinationRequest = Schema.Struct({
  breBKey: BreBKey,
  accountOwnerName: NonEmptyText(140).annotate({
    description:
      "The Bre-B account holder's name as their bank has it (at most 140 characters); checked against the key's owner"
  }),
  userAddress: Schema.optionalKey(Address.annotate({
    description:
      "The KYC-approved user who will pay: the destination is registered under their provider customer (required in live mode, where the provider keeps destinations per customer; without it there, 409 `needs_kyc`). A payout reusing the preview must name the same user."
  }))
}).annotate({ identifier: "PreviewDestinationRequest" })
export type PreviewDestinationRequest = typeof PreviewDestinationRequest.Type

export const DestinationPreviewResult = Schema.Struct({
  previewId: PreviewId,
  match: Schema.Boolean.annotate({
    description:
      "Whether `accountOwnerName` matches the holder of the key (a payout to it with this name would be 409 `destination_mismatch` when false)"
  }),
  destinationPreview: Schema.NullOr(DestinationPreview).annotate({
    description:
      "The destination as the bank shows it, when `match` is true; null otherwise (nothing about another holder is revealed)"
  }),
  expiresAt: IsoTimestamp.annotate({ description: "Until when `previewId` can be given to payout creation" })
}).annotate({
  identifier: "DestinationPreviewResult",
  description: "A payee preview: the provider's verification of a Bre-B key and holder name, before any money moves",
  examples: [DESTINATION_PREVIEW_EXAMPLE]
})
export type DestinationPreviewResult = typeof DestinationPreviewResult.Type
