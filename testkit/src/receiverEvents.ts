/**
 * The events the receiver kit sends: one of every event type the contract declares, each built on the contract's own
 * Payout example (or a resource built here for KYC, swaps and pings) and decoded with the contract's `Event` schema
 * before it is sent, so a delivery the kit makes is one the API could make. Every run uses new ids, so the state a
 * receiver kept from an earlier run never meets this one's.
 */
import {
  type EndpointDisabledEventType,
  Event,
  EventType,
  KycEventType,
  type KycStatus,
  openApiDocument,
  type PayoutBatchEventType,
  type PayoutBatchStatus,
  PayoutEvent,
  PayoutEventType,
  type PayoutStatus,
  type PingEventType,
  SwapEventType,
  type SwapStatus
} from "@cop-integrations/contracts"
import { randomBytes } from "node:crypto"
import { Schema } from "effect"

export interface KitEvent {
  readonly id: string
  readonly type: EventType
  readonly createdAt: string
  /** The payout the event is about, for the state probe (undefined for other resources). */
  readonly payoutId: string | undefined
  /** The body as sent: compact JSON of the decoded event. */
  readonly body: Buffer
}

const ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZabcdefghijkmnopqrstuvwxyz"

/** `<prefix><n random characters>`, like the API's ids. */
export const newId = (prefix: string, length: number): string =>
  `${prefix}${[...randomBytes(length)].map((byte) => ALPHABET[byte % ALPHABET.length]).join("")}`

const payoutExample = (): Record<string, unknown> => {
  const document = openApiDocument() as unknown as {
    readonly components: { readonly schemas: Record<string, { readonly examples?: ReadonlyArray<unknown> }> }
  }
  const example = document.components.schemas["Payout"]?.examples?.[0]
  if (typeof example !== "object" || example === null) throw new Error("the contract's Payout has no example")
  return example as Record<string, unknown>
}

/**
 * The payout status each `payout.*` event reports. Typed over the contract's literals: a payout event type the contract
 * adds fails to compile here until it is given its status, and so does a status no event reports (below).
 */
const PAYOUT_STATUS = {
  "payout.created": "awaiting_deposit",
  "payout.deposit_confirmed": "deposit_confirmed",
  "payout.processing": "processing",
  "payout.completed": "completed",
  "payout.failed": "failed",
  "payout.refunded": "refunded",
  "payout.expired": "expired",
  // Sent while the payout stays in deposit_confirmed or processing past the service's threshold.
  "payout.delayed": "processing"
} as const satisfies Record<typeof PayoutEventType.Type, PayoutStatus>

/** A payout status no event above reports: the kit's deliveries would never show it to a receiver. */
type UnreportedPayoutStatus = Exclude<PayoutStatus, (typeof PAYOUT_STATUS)[keyof typeof PAYOUT_STATUS]>
/** Fails to compile, naming the status, while one is unreported. */
export const everyPayoutStatusReported: [UnreportedPayoutStatus] extends [never] ? true : UnreportedPayoutStatus = true

const KYC_STATUS = {
  "kyc.approved": "approved",
  "kyc.rejected": "rejected"
} as const satisfies Record<typeof KycEventType.Type, KycStatus>

const SWAP_STATUS = {
  "swap.confirmed": "confirmed",
  "swap.failed": "failed",
  "swap.expired": "expired"
} as const satisfies Record<typeof SwapEventType.Type, SwapStatus>

const USER = "0x52908400098527886E0F7030069857D2E4169EE7"
const TOKEN = "0xcebA9300f2b948710d2653dD7B07f33A8B32118C"

const payoutObject = (type: typeof PayoutEventType.Type, payoutId: string, at: string): Record<string, unknown> => {
  const example = payoutExample()
  const status = PAYOUT_STATUS[type]
  const receipt = example["receipt"] as Record<string, unknown>
  return {
    ...example,
    payoutId,
    status,
    receipt: { ...receipt, payoutId, status, completedAt: status === "completed" ? at : null },
    updatedAt: at
  }
}

const swapObject = (type: typeof SwapEventType.Type, at: string): Record<string, unknown> => ({
  intentId: newId("sw_", 22),
  status: SWAP_STATUS[type],
  userAddress: USER,
  fromToken: "USDC",
  toToken: "COPm",
  amountIn: "10",
  expectedAmountOut: "39600",
  minAmountOut: "39402",
  slippageBps: 50,
  fees: [],
  transaction: { approvalTarget: TOKEN, to: TOKEN, data: "0x", value: "0" },
  approvalTransaction: null,
  txHash: type === "swap.expired" ? null : `0x${randomBytes(32).toString("hex")}`,
  createdAt: at,
  updatedAt: at,
  expiresAt: at
})

/** An endpoint as pinged (enabled) or as the service disabled it (a receiver's 410 Gone). */
const endpointObject = (
  type: typeof PingEventType.Type | typeof EndpointDisabledEventType.Type,
  at: string
): Record<string, unknown> => ({
  endpointId: newId("we_", 22),
  url: "http://127.0.0.1:3000/hooks",
  events: ["*"],
  status: type === "endpoint.ping" ? "enabled" : "disabled",
  signatureScheme: "v1",
  disabledReason: type === "endpoint.ping" ? null : `disabled ${at}: the receiver answered 410 Gone`,
  createdAt: at,
  updatedAt: at
})

/** A batch of one payout at each batch event, its payout at the status that event implies. */
const BATCH_STATUS = {
  "payout_batch.confirmed": { batch: "confirmed", payout: "payout.deposit_confirmed" },
  "payout_batch.finished": { batch: "completed", payout: "payout.completed" }
} as const satisfies Record<
  typeof PayoutBatchEventType.Type,
  { readonly batch: PayoutBatchStatus; readonly payout: typeof PayoutEventType.Type }
>

const batchObject = (type: typeof PayoutBatchEventType.Type, payoutId: string, at: string) => {
  const payout = payoutObject(BATCH_STATUS[type].payout, payoutId, at)
  const txHash = `0x${randomBytes(32).toString("hex")}`
  const fees = payout["fees"] as ReadonlyArray<{ readonly code: string; readonly amountUsd: string }>
  const deposit = payout["deposit"] as { readonly amount: string }
  return {
    batchId: newId("pb_", 22),
    status: BATCH_STATUS[type].batch,
    userAddress: USER,
    fromToken: "USDC",
    items: [{
      index: 0,
      reference: "INV-1",
      payout: { ...payout, txHash, feeTxHash: txHash },
      error: null,
      depositError: null
    }],
    totals: {
      count: 1,
      sourceAmount: payout["sourceAmount"],
      depositAmount: deposit.amount,
      serviceFee: fees.find((leg) => leg.code === "copby")?.amountUsd,
      destinationCop: payout["destinationCop"]
    },
    feeTransaction: payout["feeTransaction"],
    calls: payout["calls"],
    txHash,
    createdAt: at,
    expiresAt: at
  }
}

const isPayoutEventType = Schema.is(PayoutEventType)
const isKycEventType = Schema.is(KycEventType)
const isSwapEventType = Schema.is(SwapEventType)

/** The resource an event carries; an event type of a resource the contract adds fails to compile until it has one. */
const objectOf = (type: EventType, payoutId: string, at: string): Record<string, unknown> => {
  if (isPayoutEventType(type)) return payoutObject(type, payoutId, at)
  if (isKycEventType(type)) return { userAddress: USER, kycStatus: KYC_STATUS[type], kycUrl: null }
  if (isSwapEventType(type)) return swapObject(type, at)
  if (type === "endpoint.ping" || type === "endpoint.disabled") return endpointObject(type, at)
  return batchObject(type, payoutId, at)
}

const decodeEvent = Schema.decodeUnknownSync(Event)

/**
 * When the contract's envelope carries a per-resource `sequence` (1, 2, … with each event of a resource), the kit's
 * events carry it too, counted in the order they are made: the kit makes each resource's events oldest first.
 */
const declaresSequence = "sequence" in PayoutEvent.fields
const sequences = new Map<string, number>()
const nextSequence = (resourceId: string): number => {
  const next = (sequences.get(resourceId) ?? 0) + 1
  sequences.set(resourceId, next)
  return next
}

/**
 * One event of `type`, at `at`, about `payoutId` when it is a payout event. It must decode with the contract's Event
 * schema (else the kit, not the receiver, is wrong: it throws).
 */
export const makeEvent = (type: EventType, at: Date, payoutId: string = newId("po_", 22)): KitEvent => {
  const createdAt = at.toISOString()
  const object = objectOf(type, payoutId, createdAt)
  const resourceId = String(
    object["payoutId"] ?? object["batchId"] ?? object["intentId"] ?? object["userAddress"] ?? object["endpointId"]
  )
  const event = {
    id: newId("evt_", 26),
    type,
    createdAt,
    ...(declaresSequence ? { sequence: nextSequence(resourceId) } : {}),
    data: { object }
  }
  decodeEvent(event)
  return {
    id: event.id,
    type,
    createdAt,
    payoutId: type.startsWith("payout.") ? payoutId : undefined,
    body: Buffer.from(JSON.stringify(event))
  }
}

/** Every event type the contract declares, in its order. */
export const eventTypes = (): ReadonlyArray<EventType> => EventType.literals

/** The lifecycle of a payout that completes, in order: these share one payout in the kit's deliveries. */
export const HAPPY_PATH: ReadonlyArray<EventType> = [
  "payout.created",
  "payout.deposit_confirmed",
  "payout.processing",
  "payout.completed"
]
