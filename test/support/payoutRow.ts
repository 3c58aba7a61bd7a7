/**
 * A payouts row with every NOT NULL column filled (placeholder values, integration `int_x`), for tests that write
 * rows straight into the table, before or without the service.
 */
export const payoutRow = (id: string, status: string, createdAt: Date, updatedAt: Date) => ({
  id,
  integration_id: "int_x",
  status,
  user_address: "0xabc",
  from_token: "USDC",
  destination_cop: "1",
  bre_b_key: "@a",
  account_owner_name: "A",
  sell_rate: "1",
  mid_rate: "1",
  deposit_chain: "base",
  deposit_currency: "usdc",
  deposit_address: "0x1",
  deposit_amount: "1",
  service_fee: "1",
  total_paid: "1",
  effective_usd_cop: "1",
  rate_display: "1",
  fee_legs: "[]",
  transaction: "{}",
  fee_transaction: "{}",
  commission_usd: "1",
  provider_transfer_id: `tr_${id}`,
  created_at: createdAt,
  updated_at: updatedAt,
  expires_at: createdAt
})
