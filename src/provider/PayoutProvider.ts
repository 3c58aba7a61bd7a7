import type { BigDecimal } from "effect"
import { Context, Data, type Effect } from "effect"
import type { KycStatus } from "@cop-integrations/contracts"

export class ProviderUnavailable extends Data.TaggedError("ProviderUnavailable")<{ readonly reason: string }> {}

export interface UsdCopRates {
  /** COP per USD the provider sells at (what the user gets before fees) */
  readonly sellRate: BigDecimal.BigDecimal
  /** Mid-market COP per USD */
  readonly midRate: BigDecimal.BigDecimal
}

export interface DestinationCheck {
  readonly matches: boolean
  readonly accountOwnerName: string
  readonly bankName: string | null
  readonly documentLast4: string | null
  readonly externalAccountId: string
}

export interface ProviderTransfer {
  readonly transferId: string
  readonly chain: string
  readonly currency: string
  readonly depositAddress: `0x${string}`
}

/** The payout provider (Bridge in live mode): rates, KYC, Bre-B external accounts, transfers. */
export class PayoutProvider extends Context.Tag("PayoutProvider")<PayoutProvider, {
  readonly usdCopRates: Effect.Effect<UsdCopRates, ProviderUnavailable>
  readonly startKyc: (input: {
    readonly email: string
    readonly userAddress: string
  }) => Effect.Effect<{ readonly kycStatus: KycStatus; readonly kycUrl: string | null }, ProviderUnavailable>
  readonly verifyDestination: (input: {
    readonly userAddress: string
    readonly breBKey: string
    readonly accountOwnerName: string
  }) => Effect.Effect<DestinationCheck, ProviderUnavailable>
  readonly createTransfer: (input: {
    readonly payoutId: string
    readonly amount: string
    readonly userAddress: string
    readonly externalAccountId: string
  }) => Effect.Effect<ProviderTransfer, ProviderUnavailable>
  /**
   * Our onchain check saw the deposit for this transfer (runs inside the confirm transaction). Bridge detects
   * deposits itself and reports the transfer's progress by webhook, so the live provider has nothing to do here.
   */
  readonly depositConfirmed: (input: { readonly transferId: string; readonly at: Date }) => Effect.Effect<void>
}>() {}
