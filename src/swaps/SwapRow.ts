import {
  FeeLeg,
  IntegrationId,
  PreparedTx,
  SwapId,
  SwapStatus,
  SwapToken,
  TxHash,
  UserAddress
} from "@cop-integrations/contracts"
import { Schema } from "effect"

export const SwapRow = Schema.Struct({
  id: SwapId,
  integration_id: IntegrationId,
  status: SwapStatus,
  user_address: UserAddress,
  from_token: SwapToken,
  to_token: SwapToken,
  amount_in: Schema.String,
  expected_amount_out: Schema.String,
  min_amount_out: Schema.String,
  slippage_bps: Schema.Number,
  fee_legs: Schema.Array(FeeLeg),
  transaction: PreparedTx,
  approval_transaction: Schema.NullOr(PreparedTx),
  tx_hash: Schema.NullOr(TxHash),
  created_at: Schema.Date,
  updated_at: Schema.Date,
  expires_at: Schema.Date
})
export type SwapRow = typeof SwapRow.Type
