import type { Payout, PayoutReceipt, PayoutTimelineHop } from "@cop-integrations/contracts"
import { maskBreBKey } from "../destinations/BreBKeyMask.ts"
import type { PayoutRow } from "./PayoutRow.ts"

export const RECEIPT_TITLE = "Bre-B payout receipt"

const receipt = (row: PayoutRow): PayoutReceipt => ({
  title: RECEIPT_TITLE,
  status: row.status,
  completedAt: row.completed_at?.toISOString() ?? null,
  transactionType: "withdrawal",
  payoutId: row.id,
  breBKey: maskBreBKey(row.bre_b_key),
  breBKeyLast4: row.bre_b_key.slice(-4),
  beneficiaryName: row.account_owner_name,
  totalPaid: { amount: row.total_paid, currency: "USD" },
  exchangeRate: {
    display: row.rate_display,
    effectiveUsdCop: row.effective_usd_cop,
    sellRateUsdCop: row.sell_rate
  },
  commission: {
    mode: "included_in_rate",
    displayAmount: row.commission_usd,
    displayCurrency: "USD",
    note: "All fees are included in the exchange rate; nothing is charged on top."
  },
  // What the provider reports it delivered, once it does (DESIGN §3: in live mode it converts when the funds
  // arrive); until then the destinationCop the user asked for, which the quote guarantees at least.
  totalReceived: { amount: row.total_received_cop ?? row.destination_cop, currency: "COP" },
  feesItemized: row.fee_legs
})

/** Ordered by `at`; hops at the same moment keep the order they were recorded in (the sort is stable). */
export const orderedTimeline = (hops: ReadonlyArray<PayoutTimelineHop>): ReadonlyArray<PayoutTimelineHop> =>
  [...hops].sort((a, b) => Date.parse(a.at) - Date.parse(b.at))

export const presentPayout = (row: PayoutRow): Payout => ({
  payoutId: row.id,
  status: row.status,
  fromToken: row.from_token,
  sourceAmount: row.source_amount ?? row.total_paid,
  destinationCop: row.destination_cop,
  userAddress: row.user_address,
  fees: row.fee_legs,
  quote: { display: row.rate_display, effectiveUsdCop: row.effective_usd_cop },
  receipt: receipt(row),
  deposit: {
    chain: row.deposit_chain,
    currency: row.deposit_currency,
    address: row.deposit_address,
    amount: row.deposit_amount
  },
  transaction: row.transaction,
  feeTransaction: row.fee_transaction,
  destinationPreview: {
    accountOwnerName: row.account_owner_name,
    bankName: row.bank_name,
    documentLast4: row.document_last4
  },
  txHash: row.tx_hash,
  feeTxHash: row.fee_tx_hash,
  createdAt: row.created_at.toISOString(),
  updatedAt: row.updated_at.toISOString(),
  expiresAt: row.expires_at.toISOString(),
  timeline: orderedTimeline(row.timeline)
})
