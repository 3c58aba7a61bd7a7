import type { SwapIntent } from "@cop-integrations/contracts"
import type { SwapRow } from "./SwapRow.ts"

/** A stored swap as the API returns it. */
export const presentSwap = (row: SwapRow): SwapIntent => ({
  intentId: row.id,
  status: row.status,
  userAddress: row.user_address,
  fromToken: row.from_token,
  toToken: row.to_token,
  amountIn: row.amount_in,
  expectedAmountOut: row.expected_amount_out,
  minAmountOut: row.min_amount_out,
  slippageBps: row.slippage_bps,
  fees: row.fee_legs,
  transaction: row.transaction,
  approvalTransaction: row.approval_transaction,
  txHash: row.tx_hash,
  createdAt: row.created_at.toISOString(),
  updatedAt: row.updated_at.toISOString(),
  expiresAt: row.expires_at.toISOString()
})
