import { FeeLeg, PreparedTx, SwapStatus, SwapToken } from "@cop-integrations/contracts"
import { Schema } from "effect"

export const SwapRow = Schema.Struct({
  id: Schema.String,
  integration_id: Schema.String,
  status: SwapStatus,
  user_address: Schema.String,
  from_token: SwapToken,
  to_token: SwapToken,
  amount_in: Schema.String,
  expected_amount_out: Schema.String,
  min_amount_out: Schema.String,
  slippage_bps: Schema.Number,
  fee_legs: Schema.Array(FeeLeg),
  transaction: PreparedTx,
  approval_transaction: Schema.NullOr(PreparedTx),
  tx_hash: Schema.NullOr(Schema.String),
  created_at: Schema.DateFromSelf,
  updated_at: Schema.DateFromSelf,
  expires_at: Schema.DateFromSelf
})
export type SwapRow = typeof SwapRow.Type
