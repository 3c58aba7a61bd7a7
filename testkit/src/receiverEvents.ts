/**
 * The events the receiver kit sends: one of every event type the contract declares, each built on the contract's own
 * Payout example (or a resource built here for KYC, swaps and pings) and decoded with the contract's `Event` schema
 * before it is sent, so a delivery the kit makes is one the API could make. Every run uses new ids, so the state a
 * receiver kept from an earlier run never meets this one's.
 */
import { Event, EventType, openApiDocument, PayoutEvent } from "@cop-integrations/contracts"
import { randomBytes } from "node:crypto"
import { Schema } from "effect"

export interface KitEvent {
  readonly id: string
  readonly type: string
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

/** The payout status each `payout.*` event reports; a payout event type added later reports `processing`. */
const PAYOUT_STATUS: Record<string, string> = {
  "payout.created": "awaiting_deposit",
  "payout.deposit_confirmed": "deposit_confirmed",
  "payout.processing": "processing",
  "payout.completed": "completed",
  "payout.failed": "failed",
  "payout.refunded": "refunded",
  "payout.expired": "expired"
}

const USER = "0x52908400098527886E0F7030069857D2E4169EE7"
const TOKEN = "0xcebA9300f2b948710d2653dD7B07f33A8B32118C"

const payoutObject = (type: string, payoutId: string, at: string): Record<string, unknown> => {
  const example = payoutExample()
  const status = PAYOUT_STATUS[type] ?? "processing"
  const receipt = example["receipt"] as Record<string, unknown>
  return {
    ...example,
    payoutId,
    status,
    receipt: { ...receipt, payoutId, status, completedAt: status === "completed" ? at : null },
    updatedAt: at
  }
}

const swapObject = (type: string, at: string): Record<string, unknown> => ({
  intentId: newId("sw_", 22),
  status: type.slice("swap.".length),
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

const objectOf = (type: string, payoutId: string, at: string): Record<string, unknown> => {
  if (type.startsWith("payout.")) return payoutObject(type, payoutId, at)
  if (type.startsWith("kyc.")) {
    return { userAddress: USER, kycStatus: type.slice("kyc.".length), kycUrl: null }
  }
  if (type.startsWith("swap.")) return swapObject(type, at)
  return {
    endpointId: newId("we_", 22),
    url: "http://127.0.0.1:3000/hooks",
    events: ["*"],
    status: "enabled",
    disabledReason: null,
    createdAt: at,
    updatedAt: at
  }
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
export const makeEvent = (type: string, at: Date, payoutId: string = newId("po_", 22)): KitEvent => {
  const createdAt = at.toISOString()
  const object = objectOf(type, payoutId, createdAt)
  const resourceId = String(object["payoutId"] ?? object["intentId"] ?? object["userAddress"] ?? object["endpointId"])
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
export const eventTypes = (): ReadonlyArray<string> => EventType.literals

/** The lifecycle of a payout that completes, in order: these share one payout in the kit's deliveries. */
export const HAPPY_PATH = ["payout.created", "payout.deposit_confirmed", "payout.processing", "payout.completed"]
