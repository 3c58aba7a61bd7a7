/**
 * Bridge's wire shapes, in one place: request parsing, response bodies, error bodies, webhook envelopes.
 *
 * Confirmed by Bridge's public docs (apidocs.bridge.xyz): the kyc_links, transfers, exchange_rates and receipt
 * field names, the transfer states and the webhook envelope. NOT confirmed, chosen here and meant to be adjusted
 * in this file only: the Bre-B key object of an external account (`breb: { key }`), the external account
 * response's Bre-B details (`breb: { key_type, key_last_4, document_last_4 }`, `bank_name`), the COP endorsement
 * name (`cop`), the error codes, the receipt's `exchange_rate` / `destination_currency`, and the event types.
 */
import { isAddress } from "viem"
import { convertToCents, formatCents, formatUnits, isDecimal, percentOf } from "./amounts.ts"
import type {
  CustomerRecord,
  ExternalAccountRecord,
  KycLinkRecord,
  Rates,
  ReceiptRecord,
  TransferRecord,
  TransferState
} from "./state.ts"

export const API_VERSION = "v0"

// ---------------------------------------------------------------------------------------------------------
// Errors

export interface BridgeError {
  readonly code: string
  readonly message: string
  readonly source?: { readonly location: "body" | "header" | "path" | "query"; readonly key: string }
}

export const ErrorCodes = {
  unauthorized: "unauthorized",
  notFound: "not_found",
  invalidJson: "invalid_json",
  invalidParameters: "invalid_parameters",
  idempotencyKeyMissing: "missing_idempotency_key",
  idempotencyKeyReused: "idempotency_key_reused",
  accountOwnerNameMismatch: "account_owner_name_mismatch",
  customerNotApproved: "customer_not_approved",
  amountBelowMinimum: "amount_below_minimum",
  serverError: "internal_server_error",
  timeout: "gateway_timeout"
} as const

export const bridgeError = (code: string, message: string, source?: BridgeError["source"]): BridgeError =>
  source === undefined ? { code, message } : { code, message, source }

const invalid = (key: string, message: string): BridgeError =>
  bridgeError(ErrorCodes.invalidParameters, message, { location: "body", key })

export type Parsed<A> = { readonly ok: true; readonly value: A } | { readonly ok: false; readonly error: BridgeError }
const ok = <A>(value: A): Parsed<A> => ({ ok: true, value })
const fail = (error: BridgeError): Parsed<never> => ({ ok: false, error })

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)
const nonEmpty = (value: unknown): value is string => typeof value === "string" && value.trim() !== ""

// ---------------------------------------------------------------------------------------------------------
// Exchange rates: GET /v0/exchange_rates?from=usd&to=cop

export const exchangeRatesResponse = (rates: Rates) => ({
  midmarket_rate: rates.midmarket_rate,
  buy_rate: rates.buy_rate,
  sell_rate: rates.sell_rate
})

// ---------------------------------------------------------------------------------------------------------
// KYC links and customers

export interface KycLinkRequest {
  readonly fullName: string
  readonly email: string
  readonly type: "individual"
}

export const parseKycLinkRequest = (body: unknown): Parsed<KycLinkRequest> => {
  if (!isRecord(body)) return fail(invalid("body", "body must be a JSON object"))
  if (!nonEmpty(body["full_name"])) return fail(invalid("full_name", "full_name is required"))
  if (typeof body["email"] !== "string" || !/^[^@\s]+@[^@\s]+$/.test(body["email"])) {
    return fail(invalid("email", "email must be an e-mail address"))
  }
  if (body["type"] !== "individual") return fail(invalid("type", "type must be \"individual\""))
  return ok({ fullName: body["full_name"].trim(), email: body["email"], type: "individual" })
}

export const kycLinkResponse = (link: KycLinkRecord, customer: CustomerRecord, baseUrl: string) => ({
  id: link.id,
  full_name: customer.fullName,
  email: customer.email,
  type: customer.type,
  kyc_link: `${baseUrl}/__sim/kyc/${link.id}`,
  tos_link: `${baseUrl}/__sim/tos/${link.id}`,
  kyc_status: customer.kycStatus,
  tos_status: customer.tosStatus,
  rejection_reasons: customer.rejectionReasons.map((reason) => ({ reason })),
  customer_id: customer.id,
  created_at: link.createdAt
})

const customerStatus = (customer: CustomerRecord): string => {
  switch (customer.kycStatus) {
    case "approved":
      return "active"
    case "rejected":
      return "rejected"
    case "under_review":
      return "under_review"
    case "incomplete":
      return "incomplete"
    case "not_started":
      return "not_started"
  }
}

/** The customer object (GET /v0/customers/{id} and `customer` webhooks). */
export const customerResponse = (customer: CustomerRecord) => {
  const [firstName = customer.fullName, ...rest] = customer.fullName.split(/\s+/)
  return {
    id: customer.id,
    first_name: firstName,
    last_name: rest.join(" "),
    email: customer.email,
    type: customer.type,
    status: customerStatus(customer),
    kyc_status: customer.kycStatus,
    tos_status: customer.tosStatus,
    has_accepted_terms_of_service: customer.tosStatus === "approved",
    endorsements: [{ name: "cop", status: customer.copEndorsement }],
    rejection_reasons: customer.rejectionReasons.map((reason) => ({ reason })),
    created_at: customer.createdAt,
    updated_at: customer.updatedAt
  }
}

// ---------------------------------------------------------------------------------------------------------
// External accounts (Bre-B destination): POST /v0/customers/{customerId}/external_accounts

export interface ExternalAccountRequest {
  readonly accountOwnerName: string
  readonly accountOwnerType: string
  readonly breBKey: string
}

export const parseExternalAccountRequest = (body: unknown): Parsed<ExternalAccountRequest> => {
  if (!isRecord(body)) return fail(invalid("body", "body must be a JSON object"))
  if (body["currency"] !== "cop") return fail(invalid("currency", "currency must be \"cop\""))
  if (!nonEmpty(body["account_owner_name"])) {
    return fail(invalid("account_owner_name", "account_owner_name is required"))
  }
  const ownerType = body["account_owner_type"] ?? "individual"
  if (ownerType !== "individual" && ownerType !== "business") {
    return fail(invalid("account_owner_type", "account_owner_type must be \"individual\" or \"business\""))
  }
  const breb = body["breb"]
  if (!isRecord(breb) || !nonEmpty(breb["key"])) {
    return fail(invalid("breb.key", "breb.key (the Bre-B key) is required"))
  }
  return ok({
    accountOwnerName: body["account_owner_name"].trim(),
    accountOwnerType: ownerType,
    breBKey: breb["key"].trim()
  })
}

/** The Bre-B key form, as the directory would report it. */
export const breBKeyType = (key: string): string => {
  if (/^@[A-Za-z0-9]{1,19}$/.test(key)) return "alias"
  if (/^(\+57)?3[0-9]{9}$/.test(key)) return "phone"
  if (/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(key)) return "email"
  if (/^[0-9]{5,15}$/.test(key)) return "document"
  return "merchant_code"
}

export const externalAccountResponse = (account: ExternalAccountRecord) => ({
  id: account.id,
  customer_id: account.customerId,
  currency: "cop",
  account_type: "breb",
  account_owner_name: account.accountOwnerName,
  account_owner_type: account.accountOwnerType,
  bank_name: account.bankName,
  breb: {
    key_type: breBKeyType(account.breBKey),
    key_last_4: account.breBKey.slice(-4),
    document_last_4: account.documentLast4
  },
  active: true,
  created_at: account.createdAt,
  updated_at: account.createdAt
})

/** The owner-name check of the Bre-B directory: the simulator fails names containing "mismatch". */
export const ownerNameMatches = (name: string): boolean => !/mismatch/i.test(name)

export const ownerNameMismatchError = (): BridgeError =>
  bridgeError(
    ErrorCodes.accountOwnerNameMismatch,
    "account_owner_name does not match the holder of the Bre-B key",
    { location: "body", key: "account_owner_name" }
  )

// ---------------------------------------------------------------------------------------------------------
// Transfers: POST /v0/transfers, GET /v0/transfers/{id}

export interface TransferRequest {
  readonly amount: string
  readonly onBehalfOf: string
  readonly developerFeePercent: string
  readonly source: { readonly paymentRail: string; readonly currency: string; readonly fromAddress: string }
  readonly destination: { readonly paymentRail: string; readonly currency: string; readonly externalAccountId: string }
  readonly clientReferenceId: string | null
}

export const parseTransferRequest = (body: unknown): Parsed<TransferRequest> => {
  if (!isRecord(body)) return fail(invalid("body", "body must be a JSON object"))
  const { amount, on_behalf_of, developer_fee_percent, source, destination, client_reference_id } = body
  if (!isDecimal(amount) || /^0(\.0*)?$/.test(amount)) {
    return fail(invalid("amount", "amount must be a positive decimal string"))
  }
  if (!nonEmpty(on_behalf_of)) return fail(invalid("on_behalf_of", "on_behalf_of is required"))
  const feePercent = developer_fee_percent ?? "0.0"
  if (!isDecimal(feePercent) || Number(feePercent) > 100) {
    return fail(invalid("developer_fee_percent", "developer_fee_percent must be a decimal string from 0.0 to 100.0"))
  }
  if (!isRecord(source)) return fail(invalid("source", "source is required"))
  if (!nonEmpty(source["payment_rail"])) return fail(invalid("source.payment_rail", "source.payment_rail is required"))
  if (source["currency"] !== "usdc") return fail(invalid("source.currency", "source.currency must be \"usdc\""))
  if (typeof source["from_address"] !== "string" || !isAddress(source["from_address"], { strict: false })) {
    return fail(invalid("source.from_address", "source.from_address must be an address"))
  }
  if (!isRecord(destination)) return fail(invalid("destination", "destination is required"))
  if (!nonEmpty(destination["payment_rail"])) {
    return fail(invalid("destination.payment_rail", "destination.payment_rail is required"))
  }
  if (destination["currency"] !== "cop") {
    return fail(invalid("destination.currency", "destination.currency must be \"cop\""))
  }
  if (!nonEmpty(destination["external_account_id"])) {
    return fail(invalid("destination.external_account_id", "destination.external_account_id is required"))
  }
  if (client_reference_id !== undefined && client_reference_id !== null && typeof client_reference_id !== "string") {
    return fail(invalid("client_reference_id", "client_reference_id must be a string"))
  }
  return ok({
    amount,
    onBehalfOf: on_behalf_of,
    developerFeePercent: feePercent,
    source: { paymentRail: source["payment_rail"], currency: "usdc", fromAddress: source["from_address"] },
    destination: {
      paymentRail: destination["payment_rail"],
      currency: "cop",
      externalAccountId: destination["external_account_id"]
    },
    clientReferenceId: client_reference_id ?? null
  })
}

/**
 * Bridge's receipt fields (initial_amount, developer_fee, exchange_fee, subtotal_amount, gas_fee, final_amount,
 * url) plus `exchange_rate` and `destination_currency` (assumed names). Before the funds arrive it is the estimate
 * for the instructed amount, without final_amount.
 */
const receiptResponse = (
  transfer: TransferRecord,
  receipt: ReceiptRecord | null,
  decimals: number,
  baseUrl: string
) => {
  const url = `${baseUrl}/__sim/transfers/${transfer.id}/receipt`
  if (receipt === null) {
    const fee = percentOf(transfer.amountUnits, transfer.developerFeePercent)
    return {
      initial_amount: formatUnits(transfer.amountUnits, decimals),
      developer_fee: formatUnits(fee, decimals),
      exchange_fee: formatUnits(0n, decimals),
      subtotal_amount: formatUnits(transfer.amountUnits - fee, decimals),
      gas_fee: formatUnits(0n, decimals),
      url
    }
  }
  return {
    initial_amount: formatUnits(receipt.initialUnits, decimals),
    developer_fee: formatUnits(receipt.developerFeeUnits, decimals),
    exchange_fee: formatUnits(0n, decimals),
    subtotal_amount: formatUnits(receipt.subtotalUnits, decimals),
    gas_fee: formatUnits(0n, decimals),
    exchange_rate: receipt.exchangeRate,
    final_amount: formatCents(receipt.finalCents),
    destination_currency: "cop",
    url
  }
}

/** What was delivered when `receivedUnits` arrived at `sellRate`. */
export const computeReceipt = (transfer: TransferRecord, sellRate: string, decimals: number): ReceiptRecord => {
  const developerFeeUnits = percentOf(transfer.receivedUnits, transfer.developerFeePercent)
  const subtotalUnits = transfer.receivedUnits - developerFeeUnits
  return {
    initialUnits: transfer.receivedUnits,
    developerFeeUnits,
    subtotalUnits,
    finalCents: convertToCents(subtotalUnits, decimals, sellRate),
    exchangeRate: sellRate
  }
}

/** COP value of `units` at `rate`, in cents (for the offramp minimum). */
export const copCentsOf = (units: bigint, decimals: number, rate: string): bigint =>
  convertToCents(units, decimals, rate)

/** The transfer object (API responses and `transfer` webhooks); `state` overrides the stored state. */
export const transferResponse = (
  transfer: TransferRecord,
  decimals: number,
  baseUrl: string,
  override?: { readonly state: TransferState }
) => ({
  id: transfer.id,
  client_reference_id: transfer.clientReferenceId,
  state: override?.state ?? transfer.state,
  on_behalf_of: transfer.onBehalfOf,
  currency: "usd",
  amount: transfer.amount,
  developer_fee_percent: transfer.developerFeePercent,
  source: {
    payment_rail: transfer.source.paymentRail,
    currency: transfer.source.currency,
    from_address: transfer.source.fromAddress
  },
  destination: {
    payment_rail: transfer.destination.paymentRail,
    currency: transfer.destination.currency,
    external_account_id: transfer.destination.externalAccountId
  },
  source_deposit_instructions: {
    payment_rail: transfer.source.paymentRail,
    amount: transfer.amount,
    currency: transfer.source.currency,
    from_address: transfer.source.fromAddress,
    to_address: transfer.depositAddress
  },
  receipt: receiptResponse(transfer, transfer.receipt, decimals, baseUrl),
  ...(transfer.returnReason === undefined ? {} : { return_details: { reason: transfer.returnReason } }),
  ...(transfer.refund === undefined
    ? {}
    : { refund: { amount: transfer.refund.amount, tx_hash: transfer.refund.txHash } }),
  created_at: transfer.createdAt,
  updated_at: transfer.updatedAt
})

// ---------------------------------------------------------------------------------------------------------
// Webhook envelope

export type EventCategory = "customer" | "transfer"

export const EventTypes = {
  customer: "customer.updated.status_transitioned",
  transfer: "transfer.updated.status_transitioned"
} as const

export interface WebhookEnvelope {
  readonly api_version: string
  readonly event_id: string
  readonly event_category: EventCategory
  readonly event_type: string
  readonly event_object_id: string
  readonly event_object_status: string | null
  readonly event_object: Record<string, unknown>
  readonly event_object_changes: Record<string, readonly [unknown, unknown]>
  readonly event_created_at: string
}

export const webhookEnvelope = (input: {
  readonly eventId: string
  readonly category: EventCategory
  readonly objectId: string
  readonly status: string | null
  readonly object: Record<string, unknown>
  readonly changes: Record<string, readonly [unknown, unknown]>
  readonly createdAt: string
}): WebhookEnvelope => ({
  api_version: API_VERSION,
  event_id: input.eventId,
  event_category: input.category,
  event_type: EventTypes[input.category],
  event_object_id: input.objectId,
  event_object_status: input.status,
  event_object: input.object,
  event_object_changes: input.changes,
  event_created_at: input.createdAt
})
