import {
  FeeLeg,
  FundingToken,
  IntegrationId,
  PayoutFailure,
  PayoutId,
  PayoutRefund,
  PayoutStatus,
  PayoutTimelineHop,
  PreparedTx,
  TxHash,
  UserAddress
} from "@cop-integrations/contracts"
import { Schema } from "effect"

export const PayoutRow = Schema.Struct({
  id: PayoutId,
  integration_id: IntegrationId,
  status: PayoutStatus,
  user_address: UserAddress,
  from_token: FundingToken,
  destination_cop: Schema.String,
  bre_b_key: Schema.String,
  account_owner_name: Schema.String,
  bank_name: Schema.NullOr(Schema.String),
  document_last4: Schema.NullOr(Schema.String),
  sell_rate: Schema.String,
  mid_rate: Schema.String,
  deposit_chain: Schema.String,
  deposit_currency: Schema.String,
  deposit_address: Schema.String,
  deposit_amount: Schema.String,
  /** The service fee in fromToken (what feeTransaction moves; USD for USDC payouts). */
  service_fee: Schema.String,
  total_paid: Schema.String,
  effective_usd_cop: Schema.String,
  rate_display: Schema.String,
  fee_legs: Schema.Array(FeeLeg),
  transaction: PreparedTx,
  fee_transaction: PreparedTx,
  commission_usd: Schema.String,
  provider_transfer_id: Schema.String,
  tx_hash: Schema.NullOr(TxHash),
  fee_tx_hash: Schema.NullOr(TxHash),
  created_at: Schema.Date,
  updated_at: Schema.Date,
  expires_at: Schema.Date,
  completed_at: Schema.NullOr(Schema.Date),
  /** Its hops in the order they were recorded (jsonb, only ever appended to: see PayoutRepo). */
  timeline: Schema.Array(PayoutTimelineHop),
  /** COP the provider reports it delivered (receipt `final_amount`, 2 decimals); null until it does. */
  total_received_cop: Schema.optional(Schema.NullOr(Schema.String)),
  /** What the user pays in fromToken when it is not the USD total (a payout funded from COPm); null: total_paid. */
  source_amount: Schema.optional(Schema.NullOr(Schema.String)),
  /** Why it failed or was refunded, once it did (set once, never replaced). */
  failure: Schema.optional(Schema.NullOr(PayoutFailure)),
  /** The deposit going back to the user, once the provider says it will. */
  refund: Schema.optional(Schema.NullOr(PayoutRefund)),
  /** When the partner canceled it (its deposit window closed early); funds after it are returned, not paid out. */
  canceled_at: Schema.optional(Schema.NullOr(Schema.Date)),
  /** The batch it was made in, and the reference its item gave (a single payout has neither). */
  batch_id: Schema.optional(Schema.NullOr(Schema.String)),
  reference: Schema.optional(Schema.NullOr(Schema.String))
})
export type PayoutRow = typeof PayoutRow.Type
