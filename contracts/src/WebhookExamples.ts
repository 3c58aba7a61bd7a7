/**
 * One example body per event type for the document's `webhooks`: each the resource at the moment of that event, as a
 * live deployment sends it (one payout's journey from `payout.created` at sequence 1 to `payout.refunded` at 5; a
 * payout that expired, one reported delayed; a customer; swaps; an endpoint). A test checks each against its body
 * schema and its object's status against EVENT_OBJECT_STATUSES.
 */
import type { EventType } from "./Event.ts"
import { EXAMPLE_USER, PAYOUT_EXAMPLE } from "./Examples.ts"
import { FAILURE_CODES } from "./PayoutFailure.ts"

const CREATED_AT = PAYOUT_EXAMPLE.createdAt // 2026-11-25T04:21:10.903Z
const DEPOSIT_TX = "0x3f6c1e0b9a7d5c3e1f2a4b6c8d0e2f4a6b8c0d2e4f6a8b0c2d4e6f8a0b2c4d6e"
const REFUND_TX = "0x8d2e4f6a8b0c2d4e6f8a0b2c4d6e8f0a2b4c6d8e0f2a4b6c8d0e2f4a6b8c0d2e"

/** The moments of the payout's journey (a live deployment: the chain's block, the provider's webhooks). */
const AT = {
  mined: "2026-11-25T04:23:41.000Z",
  confirmed: "2026-11-25T04:23:44.517Z",
  received: "2026-11-25T04:24:02.118Z",
  completed: "2026-11-25T04:24:31.640Z",
  failed: "2026-11-25T04:25:12.306Z",
  refunded: "2026-11-25T04:41:53.072Z",
  delayed: "2026-11-25T04:54:02.355Z",
  expired: "2026-11-25T04:51:11.204Z"
} as const

type Hop = { readonly status: string; readonly at: string; readonly source: string } & Record<string, string>
type FeeStatus = "quoted" | "pending" | "verified"

/** The payout example at a later status: its fees, receipt, hashes, failure, refund and timeline to match. */
const payoutAt = (status: string, changes: {
  readonly updatedAt: string
  readonly timeline: ReadonlyArray<Hop>
  readonly providerFees: FeeStatus
  readonly serviceFee: FeeStatus
  readonly deposited: boolean
  readonly completedAt?: string
  readonly failure?: keyof typeof FAILURE_CODES
  readonly refunded?: boolean
}) => {
  const fees = PAYOUT_EXAMPLE.fees.map((leg) => ({
    ...leg,
    status: leg.code === "copby" ? changes.serviceFee : changes.providerFees
  }))
  const failure = changes.failure === undefined ? null : {
    code: changes.failure,
    category: FAILURE_CODES[changes.failure].category,
    retryable: FAILURE_CODES[changes.failure].retryable,
    message: FAILURE_CODES[changes.failure].message,
    at: AT.failed
  }
  return {
    ...PAYOUT_EXAMPLE,
    status,
    fees,
    receipt: {
      ...PAYOUT_EXAMPLE.receipt,
      status,
      completedAt: changes.completedAt ?? null,
      commission: changes.refunded === true
        ? {
          ...PAYOUT_EXAMPLE.receipt.commission,
          note:
            "All fees are included in the exchange rate; nothing is charged on top. The 1% service fee was paid apart from the deposit and is not returned with it."
        }
        : PAYOUT_EXAMPLE.receipt.commission,
      feesItemized: fees
    },
    txHash: changes.deposited ? DEPOSIT_TX : null,
    updatedAt: changes.updatedAt,
    failure,
    refund: changes.refunded === true
      ? {
        status: "sent",
        to: EXAMPLE_USER,
        token: "USDC",
        amount: PAYOUT_EXAMPLE.deposit.amount,
        retained: "0",
        txHash: REFUND_TX,
        at: AT.refunded
      }
      : null,
    timeline: [{ status: "created", at: CREATED_AT, source: "api" }, ...changes.timeline]
  }
}

const DEPOSITED: ReadonlyArray<Hop> = [
  { status: "deposit_mined", at: AT.mined, source: "chain", blockTime: AT.mined },
  { status: "deposit_confirmed", at: AT.confirmed, source: "api" }
]
const SUBMITTED: ReadonlyArray<Hop> = [
  ...DEPOSITED,
  { status: "funds_received", at: AT.received, source: "provider_webhook" },
  { status: "processing", at: AT.received, source: "provider_webhook" }
]
const FAILED: ReadonlyArray<Hop> = [...SUBMITTED, { status: "failed", at: AT.failed, source: "provider_webhook" }]

/** Confirmed with one `calls` batch: the service fee is verified from the deposit's own receipt. */
const paid = { deposited: true, serviceFee: "verified" } as const

const SWAP_EXAMPLE = {
  intentId: "sw_8JqV3nWc5ZtR1xLd7HsK2p",
  status: "prepared",
  userAddress: EXAMPLE_USER,
  fromToken: "USDC",
  toToken: "COPm",
  amountIn: "10.000000",
  expectedAmountOut: "39872.000000000000000000",
  minAmountOut: "39672.640000000000000000",
  slippageBps: 50,
  fees: [{ code: "swap", amountUsd: "0.032000", to: null, status: "quoted" }],
  transaction: {
    approvalTarget: "0x5555555555555555555555555555555555555555",
    to: "0x5555555555555555555555555555555555555555",
    data:
      "0xd5bcb9b5000000000000000000000000ceba9300f2b948710d2653dd7b07f33a8b32118c0000000000000000000000008a567e2ae79ca692bd748ab832081c45de4041ea0000000000000000000000000000000000000000000000000000000000989680000000000000000000000000000000000000000000000866a87acd584120000000000000000000000000000052908400098527886e0f7030069857d2e4169ee7",
    value: "0"
  },
  approvalTransaction: {
    approvalTarget: null,
    to: "0xcebA9300f2b948710d2653dD7B07f33A8B32118C",
    data:
      "0x095ea7b300000000000000000000000055555555555555555555555555555555555555550000000000000000000000000000000000000000000000000000000000989680",
    value: "0"
  },
  txHash: null,
  createdAt: "2026-11-25T05:02:17.440Z",
  updatedAt: "2026-11-25T05:02:17.440Z",
  expiresAt: "2026-11-25T05:07:17.440Z"
} as const

const SWAP_TX = "0x6a4c2e0f8d6b4a29e7c5a3f1d9b7e5c3a1f9d7b5e3c1a9f7d5b3e1c9a7f5d3b1"

const swapAt = (status: string, txHash: string | null, fee: FeeStatus, updatedAt: string) => ({
  ...SWAP_EXAMPLE,
  status,
  fees: SWAP_EXAMPLE.fees.map((leg) => ({ ...leg, status: fee })),
  txHash,
  updatedAt
})

/**
 * A batch of two items signed once: the first the example payout, the second not valid (no payout made for it). Its
 * transaction pays the deposit and the fee, so the payout's `txHash` and `feeTxHash` are the batch's.
 */
const BATCH_TX = "0x2b7d9f1e3a5c7e9b1d3f5a7c9e1b3d5f7a9c1e3b5d7f9a1c3e5b7d9f1a3c5e7b"
const batchAt = (status: string, payout: unknown, changes: { readonly txHash: string | null }) => ({
  batchId: "pb_7QnR2xLd9Vw4KcP1sT8yZa",
  status,
  userAddress: EXAMPLE_USER,
  fromToken: "USDC",
  items: [
    { index: 0, reference: "INV-2026-1101", payout, error: null, depositError: null },
    {
      index: 1,
      reference: "INV-2026-1102",
      payout: null,
      error: { error: "items.1.accountOwnerName: is missing" },
      depositError: null
    }
  ],
  totals: {
    count: 1,
    sourceAmount: PAYOUT_EXAMPLE.sourceAmount,
    depositAmount: PAYOUT_EXAMPLE.deposit.amount,
    serviceFee: "0.634486",
    destinationCop: PAYOUT_EXAMPLE.destinationCop
  },
  feeTransaction: PAYOUT_EXAMPLE.feeTransaction,
  calls: PAYOUT_EXAMPLE.calls,
  txHash: changes.txHash,
  createdAt: CREATED_AT,
  expiresAt: PAYOUT_EXAMPLE.expiresAt
})
const inBatch = (payout: ReturnType<typeof payoutAt>) => ({ ...payout, txHash: BATCH_TX, feeTxHash: BATCH_TX })

const event = (id: string, type: EventType, createdAt: string, sequence: number, object: unknown) => ({
  id,
  type,
  createdAt,
  sequence,
  data: { object }
})

/** One example body per event type. */
export const WEBHOOK_EXAMPLES: { readonly [Type in EventType]: ReturnType<typeof event> } = {
  "payout.created": event("evt_01KAZ6QX1M8B3V5N7R9T2W4Y6C", "payout.created", CREATED_AT, 1, PAYOUT_EXAMPLE),
  "payout.deposit_confirmed": event(
    "evt_01KAZ6TB4D8F2H6K9M3P5R7T1V",
    "payout.deposit_confirmed",
    AT.confirmed,
    2,
    payoutAt("deposit_confirmed", {
      ...paid,
      updatedAt: AT.confirmed,
      timeline: DEPOSITED,
      providerFees: "pending"
    })
  ),
  "payout.processing": event(
    "evt_01KAZ6TW7G2J5M8Q1S4V6X9Z3B",
    "payout.processing",
    AT.received,
    3,
    payoutAt("processing", { ...paid, updatedAt: AT.received, timeline: SUBMITTED, providerFees: "pending" })
  ),
  "payout.completed": event(
    "evt_01KAZ6VQ9K3N6R2T5W8Y1A4C7E",
    "payout.completed",
    AT.completed,
    4,
    payoutAt("completed", {
      ...paid,
      updatedAt: AT.completed,
      completedAt: AT.completed,
      timeline: [...SUBMITTED, { status: "completed", at: AT.completed, source: "provider_webhook" }],
      providerFees: "verified"
    })
  ),
  "payout.failed": event(
    "evt_01KAZ6WS2M5Q8T1W4Z7B9D3F6H",
    "payout.failed",
    AT.failed,
    4,
    payoutAt("failed", {
      ...paid,
      updatedAt: AT.failed,
      timeline: FAILED,
      providerFees: "pending",
      failure: "rejected_by_bank"
    })
  ),
  "payout.refunded": event(
    "evt_01KAZ7FD6P9S2V5Y8B1E4G7J0K",
    "payout.refunded",
    AT.refunded,
    5,
    payoutAt("refunded", {
      ...paid,
      updatedAt: AT.refunded,
      timeline: [
        ...FAILED,
        { status: "refunded", at: AT.refunded, source: "provider_webhook" },
        { status: "refunded", at: AT.refunded, source: "provider_webhook", refundStatus: "sent" }
      ],
      providerFees: "pending",
      failure: "rejected_by_bank",
      refunded: true
    })
  ),
  "payout.expired": event(
    "evt_01KAZ7XE3R6V9Y2B5D8G1J4M7N",
    "payout.expired",
    AT.expired,
    2,
    payoutAt("expired", {
      deposited: false,
      serviceFee: "quoted",
      providerFees: "quoted",
      updatedAt: AT.expired,
      timeline: [{ status: "expired", at: AT.expired, source: "sweep" }]
    })
  ),
  "payout.delayed": event(
    "evt_01KAZ7ZA8T1W4Z7C0E3H6K9N2Q",
    "payout.delayed",
    AT.delayed,
    4,
    // Its status unchanged since it was submitted, more than 30 minutes before.
    payoutAt("processing", {
      ...paid,
      updatedAt: AT.received,
      timeline: [...SUBMITTED, { status: "delayed", at: AT.delayed, source: "sweep" }],
      providerFees: "pending"
    })
  ),
  "endpoint.disabled": event("evt_01KAZ9D4H6K8N0Q2S4U6W8Y0A2", "endpoint.disabled", "2026-11-25T05:20:41.227Z", 1, {
    endpointId: "we_5KdP8sVn2QxR7mTz4LcW1b",
    url: "https://partner.example/hooks/old",
    events: ["*"],
    status: "disabled",
    signatureScheme: "v1",
    disabledReason: "disabled 2026-11-25T05:20:41.227Z: the receiver answered 410 Gone",
    createdAt: "2026-11-20T09:14:03.118Z",
    updatedAt: "2026-11-25T05:20:41.227Z"
  }),
  "payout_batch.confirmed": event(
    "evt_01KAZ6TB9Q4S7V1Y3A6C8E0G2J",
    "payout_batch.confirmed",
    AT.confirmed,
    1,
    batchAt(
      "confirmed",
      inBatch(payoutAt("deposit_confirmed", {
        ...paid,
        updatedAt: AT.confirmed,
        timeline: DEPOSITED,
        providerFees: "pending"
      })),
      { txHash: BATCH_TX }
    )
  ),
  "payout_batch.finished": event(
    "evt_01KAZ6VR2T5W8Z1B4D7F0H3K6M",
    "payout_batch.finished",
    AT.completed,
    2,
    batchAt(
      "completed",
      inBatch(payoutAt("completed", {
        ...paid,
        updatedAt: AT.completed,
        completedAt: AT.completed,
        timeline: [...SUBMITTED, { status: "completed", at: AT.completed, source: "provider_webhook" }],
        providerFees: "verified"
      })),
      { txHash: BATCH_TX }
    )
  ),
  "kyc.approved": event("evt_01KAZ5R2C4E6G8J0M2P4S6V8X0", "kyc.approved", "2026-11-25T04:12:48.331Z", 1, {
    userAddress: EXAMPLE_USER,
    kycStatus: "approved",
    kycUrl: "https://kyc.provider.example/verify/kl_9f3a2c"
  }),
  "kyc.rejected": event("evt_01KAZ5S7F9H1K3N5Q7T9W1Y3A5", "kyc.rejected", "2026-11-25T04:13:02.718Z", 1, {
    userAddress: "0x8ba1f109551bD432803012645Ac136ddd64DBA72",
    kycStatus: "rejected",
    kycUrl: "https://kyc.provider.example/verify/kl_4e7b1d"
  }),
  "swap.confirmed": event(
    "evt_01KAZ8B3D5F7H9K1M3P5R7T9V1",
    "swap.confirmed",
    "2026-11-25T05:02:39.905Z",
    1,
    swapAt("confirmed", SWAP_TX, "verified", "2026-11-25T05:02:39.905Z")
  ),
  "swap.failed": event(
    "evt_01KAZ8C6G8J0M2P4S6V8X0Z2B4",
    "swap.failed",
    "2026-11-25T05:02:40.612Z",
    1,
    swapAt("failed", SWAP_TX, "quoted", "2026-11-25T05:02:40.612Z")
  ),
  "swap.expired": event(
    "evt_01KAZ8N1Q3S5V7X9Z1C3E5G7J9",
    "swap.expired",
    "2026-11-25T05:07:18.027Z",
    1,
    swapAt("expired", null, "quoted", "2026-11-25T05:07:18.027Z")
  ),
  "endpoint.ping": event("evt_01KAZ5K8M0P2R4T6W8Y0B2D4F6", "endpoint.ping", "2026-11-25T04:10:21.560Z", 1, {
    endpointId: "we_5tGh2KxQ9mWz4RbN7cVp1L",
    url: "https://hooks.partner.example/cop",
    events: ["*"],
    status: "enabled",
    signatureScheme: "v1",
    disabledReason: null,
    createdAt: "2026-11-25T04:10:19.214Z",
    updatedAt: "2026-11-25T04:10:19.214Z"
  })
}
