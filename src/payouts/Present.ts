import type { Payout, PayoutReceipt, PayoutTimelineHop, PreparedTx, WalletSendCalls } from "@cop-integrations/contracts"
import { Context, Option } from "effect"
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
    note: row.status === "refunded"
      ? "All fees are included in the exchange rate; nothing is charged on top. The 1% service fee was paid apart from the deposit and is not returned with it."
      : "All fees are included in the exchange rate; nothing is charged on top."
  },
  // What the provider reports it delivered, once it does (DESIGN §3: in live mode it converts when the funds
  // arrive); until then the destinationCop the user asked for, which the quote guarantees at least.
  totalReceived: { amount: row.total_received_cop ?? row.destination_cop, currency: "COP" },
  feesItemized: row.fee_legs
})

/** Ordered by `at`; hops at the same moment keep the order they were recorded in (the sort is stable). */
export const orderedTimeline = (hops: ReadonlyArray<PayoutTimelineHop>): ReadonlyArray<PayoutTimelineHop> =>
  [...hops].sort((a, b) => Date.parse(a.at) - Date.parse(b.at))

/** The deployment's chain id (CHAIN_ID) for a payout's `calls`; none (no `calls`) unless the app provides it. */
export const PayoutChainId = Context.Reference<Option.Option<number>>("PayoutChainId", {
  defaultValue: () => Option.none()
})

const hexQuantity = (value: bigint) => `0x${value.toString(16)}`

const asCall = (prepared: PreparedTx) => ({
  to: prepared.to,
  data: prepared.data,
  value: hexQuantity(BigInt(prepared.value))
})

/** `transactions` as one EIP-5792 `wallet_sendCalls` batch from `from`; none without the deployment's chain id. */
export const walletSendCalls = (
  from: string,
  transactions: ReadonlyArray<PreparedTx>,
  chainId: Option.Option<number>
): WalletSendCalls | null =>
  Option.isNone(chainId)
    ? null
    : {
      version: "2.0.0",
      chainId: hexQuantity(BigInt(chainId.value)),
      from,
      atomicRequired: true,
      calls: transactions.map(asCall)
    }

/**
 * The deposit and fee transfers as one EIP-5792 `wallet_sendCalls` batch: none without the deployment's chain id,
 * nor when the deposit transaction needs an approval first (a COPm payout's router swap).
 */
const walletCalls = (row: PayoutRow, chainId: Option.Option<number>): WalletSendCalls | null =>
  row.transaction.approvalTarget !== null
    ? null
    : walletSendCalls(row.user_address, [row.transaction, row.fee_transaction], chainId)

/** The payout as partners see it; `chainId` is the deployment's (CHAIN_ID), for its `calls`. */
export const presentPayout = (row: PayoutRow, chainId: Option.Option<number>): Payout => ({
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
  calls: walletCalls(row, chainId),
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
  failure: row.failure ?? null,
  refund: row.refund ?? null,
  timeline: orderedTimeline(row.timeline)
})
