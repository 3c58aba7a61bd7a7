/**
 * The simulator's memory: customers, KYC links, external accounts, transfers, stored idempotent responses,
 * the fault switches and a log of the /v0 requests. Internal records only; the wire shapes live in shapes.ts.
 */

export type KycStatus = "not_started" | "incomplete" | "under_review" | "approved" | "rejected"
export type TosStatus = "pending" | "approved"

/** Bridge's transfer states (notes/provider.md). */
export const TRANSFER_STATES = [
  "awaiting_funds",
  "in_review",
  "funds_received",
  "payment_submitted",
  "payment_processed",
  "undeliverable",
  "returned",
  "missing_return_policy",
  "refunded",
  "canceled",
  "error"
] as const
export type TransferState = (typeof TRANSFER_STATES)[number]
export const isTransferState = (value: unknown): value is TransferState =>
  typeof value === "string" && (TRANSFER_STATES as ReadonlyArray<string>).includes(value)

export interface CustomerRecord {
  readonly id: string
  readonly fullName: string
  readonly email: string
  readonly type: "individual"
  kycStatus: KycStatus
  tosStatus: TosStatus
  /** The COP payout endorsement (its name on the wire is in shapes.ts). */
  copEndorsement: "incomplete" | "approved" | "revoked"
  rejectionReasons: Array<string>
  readonly createdAt: string
  updatedAt: string
}

export interface KycLinkRecord {
  readonly id: string
  readonly customerId: string
  readonly createdAt: string
}

export interface ExternalAccountRecord {
  readonly id: string
  readonly customerId: string
  readonly accountOwnerName: string
  readonly accountOwnerType: string
  readonly breBKey: string
  readonly bankName: string
  readonly documentLast4: string
  readonly createdAt: string
}

/** What the provider delivered, fixed when the funds arrive. */
export interface ReceiptRecord {
  readonly initialUnits: bigint
  readonly developerFeeUnits: bigint
  readonly subtotalUnits: bigint
  readonly finalCents: bigint
  readonly exchangeRate: string
}

export interface TransferRecord {
  readonly id: string
  readonly clientReferenceId: string | null
  readonly onBehalfOf: string
  readonly amount: string
  readonly amountUnits: bigint
  readonly developerFeePercent: string
  readonly source: { readonly paymentRail: string; readonly currency: string; readonly fromAddress: string }
  readonly destination: { readonly paymentRail: string; readonly currency: string; readonly externalAccountId: string }
  readonly depositAddress: `0x${string}`
  state: TransferState
  receivedUnits: bigint
  readonly deposits: Array<
    { readonly txHash: string; readonly logIndex: number; readonly from: string; readonly units: bigint }
  >
  receipt: ReceiptRecord | null
  /** Why the transfer failed or was returned (`return_details.reason`), once it has. */
  returnReason?: string
  /** The deposit going back to its sender, once the transfer is returned (refund_to_sender). */
  refund?: RefundRecord
  readonly createdAt: string
  updatedAt: string
}

/** What is returned (`units`: received less the return fee) to the deposit's sender, and its transaction once sent. */
export interface RefundRecord {
  readonly units: bigint
  readonly toAddress: string
  txHash: string | null
  /** Why sending it onchain failed, if it did. */
  error: string | null
}

/** Bridge's crypto return strategies (per developer); null: no policy at all. */
export type ReturnPolicyStrategy = "refund_to_sender" | "static_address"

export interface StoredResponse {
  readonly fingerprint: string
  readonly status: number
  readonly body: string
  readonly storedAt: number
}

export interface RequestLogEntry {
  readonly seq: number
  readonly at: string
  readonly method: string
  readonly path: string
  readonly idempotencyKey: string | null
  status: number | null
  fault: "error" | "timeout" | null
  replayed: boolean
}

export interface Faults {
  errors: { remaining: number; status: number }
  /** `path`: only requests to this path (e.g. `/v0/transfers`) count and hang; null: every /v0 request. */
  timeouts: { remaining: number; afterProcessing: boolean; hangMs: number | null; path: string | null }
  duplicates: { remaining: number }
  stale: { remaining: number; ageMs: number }
  outOfOrder: { remaining: number }
}

export const noFaults = (): Faults => ({
  errors: { remaining: 0, status: 500 },
  timeouts: { remaining: 0, afterProcessing: false, hangMs: null, path: null },
  duplicates: { remaining: 0 },
  stale: { remaining: 0, ageMs: 11 * 60 * 1000 },
  outOfOrder: { remaining: 0 }
})

export interface Rates {
  readonly midmarket_rate: string
  readonly buy_rate: string
  readonly sell_rate: string
}

export class SimulatorState {
  readonly customers = new Map<string, CustomerRecord>()
  readonly kycLinks = new Map<string, KycLinkRecord>()
  readonly externalAccounts = new Map<string, ExternalAccountRecord>()
  readonly transfers = new Map<string, TransferRecord>()
  readonly idempotency = new Map<string, StoredResponse>()
  readonly requests: Array<RequestLogEntry> = []
  faults: Faults = noFaults()
  private requestSeq = 0

  constructor(
    public rates: Rates,
    public webhookUrl: string | null,
    public stepDelayMs: number
  ) {}

  logRequest(entry: Omit<RequestLogEntry, "seq" | "at" | "status" | "fault" | "replayed">): RequestLogEntry {
    const logged: RequestLogEntry = {
      ...entry,
      seq: ++this.requestSeq,
      at: new Date().toISOString(),
      status: null,
      fault: null,
      replayed: false
    }
    this.requests.push(logged)
    return logged
  }

  /**
   * Transfers whose deposit address is watched, by lower-case deposit address: those still waiting for their deposit,
   * and those canceled with nothing returned yet (funds sent after a cancel go back to their sender).
   */
  openTransfersByAddress(): Map<string, TransferRecord> {
    const open = new Map<string, TransferRecord>()
    for (const transfer of this.transfers.values()) {
      const watched = transfer.state === "awaiting_funds" || (transfer.state === "canceled" && !transfer.refund)
      if (watched) open.set(transfer.depositAddress.toLowerCase(), transfer)
    }
    return open
  }
}

export const nowIso = () => new Date().toISOString()
