import type { KnownFailureCode, PayoutStatus, TxHash } from "@cop-integrations/contracts"

/**
 * A provider transfer's progress in payout terms, as the provider reports it (a callback, an answer to "how is this
 * transfer", a mock's own progress). The provider's raw states stay behind its adapter (`provider/bridge/`).
 */
export interface TransferProgress {
  readonly transferId: string
  /** The payout status the transfer's state means; null: none yet (awaiting funds, in review, a state we do not know). */
  readonly status: PayoutStatus | null
  /** Whether the provider's state says the funds reached it. */
  readonly fundsArrived: boolean
  /** The COP the provider reports it delivered (its receipt), as it wrote it; null when it says none. */
  readonly finalAmountCop: string | null
  /** Why the transfer failed or was returned, in the service's codes; null when it has not (or the status says none). */
  readonly failureCode: KnownFailureCode | null
  /** The deposit going back to its sender, once the provider says so; null when it does not. */
  readonly refund: ProviderRefund | null
}

/** The provider's word on a refund: what it returns (whole USDC, when it says) and the transaction, once sent. */
export interface ProviderRefund {
  readonly amount: string | null
  readonly txHash: TxHash | null
}

/** A progress with no payout meaning: the transfer exists and nothing has happened to it yet. */
export const noProgress = (transferId: string): TransferProgress => ({
  transferId,
  status: null,
  fundsArrived: false,
  finalAmountCop: null,
  failureCode: null,
  refund: null
})
