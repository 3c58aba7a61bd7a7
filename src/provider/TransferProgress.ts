import type { PayoutStatus } from "@cop-integrations/contracts"

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
}

/** A progress with no payout meaning: the transfer exists and nothing has happened to it yet. */
export const noProgress = (transferId: string): TransferProgress => ({
  transferId,
  status: null,
  fundsArrived: false,
  finalAmountCop: null
})
