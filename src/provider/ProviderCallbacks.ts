import type { BadRequest, InvalidWebhookSignature, KycStatus } from "@cop-integrations/contracts"
import { Context, type Effect } from "effect"
import type { TransferProgress } from "./TransferProgress.ts"

/** What one provider callback says, in payout terms; `eventId` is the provider's, for de-duplication. */
export type ProviderCallback =
  | {
    readonly _tag: "Transfer"
    readonly eventId: string
    readonly category: string
    readonly progress: TransferProgress
  }
  | {
    readonly _tag: "Kyc"
    readonly eventId: string
    readonly category: string
    readonly providerCustomerId: string
    readonly kycStatus: KycStatus
  }
  /** An event about something else, or one whose object we cannot read: recorded, changes nothing. */
  | { readonly _tag: "Other"; readonly eventId: string; readonly category: string }

/** Reads the provider's callbacks: checks who sent one, then says what it means. */
export class ProviderCallbacks extends Context.Service<ProviderCallbacks, {
  readonly read: (input: {
    readonly headers: Readonly<Record<string, string | undefined>>
    readonly rawBody: string
  }) => Effect.Effect<ProviderCallback, InvalidWebhookSignature | BadRequest>
}>()("ProviderCallbacks") {}
