import { FeeLeg, FundingToken, IntegrationId, SwapToken } from "@cop-integrations/contracts"
import { Context, Effect, Layer, Schema } from "effect"
import { SchemaJITCompiler } from "effect/schema"
import { SqlClient, SqlSchema } from "effect/sql"
import { visibleBefore } from "../db/ListHorizon.ts"

/** What a report reads of a payout: its columns, and the parts of its JSON columns a report shows, as text. */
export const PayoutReportSource = Schema.Struct({
  id: Schema.String,
  created_at: Schema.Date,
  status: Schema.String,
  user_address: Schema.String,
  from_token: FundingToken,
  source_amount: Schema.String,
  deposit_amount: Schema.String,
  service_fee: Schema.String,
  fee_legs: Schema.Array(FeeLeg),
  sell_rate: Schema.String,
  effective_usd_cop: Schema.String,
  destination_cop: Schema.String,
  total_received_cop: Schema.NullOr(Schema.String),
  bre_b_key: Schema.String,
  account_owner_name: Schema.String,
  tx_hash: Schema.NullOr(Schema.String),
  fee_tx_hash: Schema.NullOr(Schema.String),
  completed_at: Schema.NullOr(Schema.Date),
  deposit_mined_at: Schema.NullOr(Schema.String),
  failure_code: Schema.NullOr(Schema.String),
  failed_at: Schema.NullOr(Schema.String),
  refund_status: Schema.NullOr(Schema.String),
  refund_amount: Schema.NullOr(Schema.String),
  refund_tx_hash: Schema.NullOr(Schema.String),
  provider_transfer_id: Schema.String,
  batch_id: Schema.NullOr(Schema.String),
  reference: Schema.NullOr(Schema.String)
})
export type PayoutReportSource = typeof PayoutReportSource.Type

export const SwapReportSource = Schema.Struct({
  id: Schema.String,
  created_at: Schema.Date,
  updated_at: Schema.Date,
  status: Schema.String,
  user_address: Schema.String,
  from_token: SwapToken,
  to_token: SwapToken,
  amount_in: Schema.String,
  expected_amount_out: Schema.String,
  min_amount_out: Schema.String,
  slippage_bps: Schema.Number,
  fee_legs: Schema.Array(FeeLeg),
  tx_hash: Schema.NullOr(Schema.String)
})
export type SwapReportSource = typeof SwapReportSource.Type

/** A report's slice of one integration's resources: created in [from, before), after the keyset position. */
const ReportPage = Schema.Struct({
  integrationId: IntegrationId,
  from: Schema.Date,
  before: Schema.Date,
  after: Schema.NullOr(Schema.Struct({ createdAt: Schema.Date, id: Schema.String })),
  limit: Schema.Number
})
export type ReportPage = typeof ReportPage.Type

const DayRange = Schema.Struct({ integrationId: IntegrationId, from: Schema.Date, to: Schema.Date })

/** Sums are PostgreSQL `numeric` (exact), read back as its text. */
const PayoutTotals = Schema.Struct({
  status: Schema.String,
  from_token: FundingToken,
  count: Schema.NumberFromString,
  source_amount: Schema.String,
  deposit_amount: Schema.String,
  service_fee: Schema.String,
  destination_cop: Schema.String,
  cop_delivered: Schema.String
})
export type PayoutTotals = typeof PayoutTotals.Type

const SwapTotals = Schema.Struct({
  status: Schema.String,
  from_token: SwapToken,
  to_token: SwapToken,
  count: Schema.NumberFromString,
  amount_in: Schema.String,
  expected_amount_out: Schema.String
})
export type SwapTotals = typeof SwapTotals.Type

/** The reports' reads: keyset pages in creation order, and a day's sums. Another integration's rows are never read. */
export class ReportRepo extends Context.Service<ReportRepo>()("ReportRepo", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    SchemaJITCompiler.enable(PayoutReportSource.ast)
    SchemaJITCompiler.enable(SwapReportSource.ast)

    const keyset = (page: typeof ReportPage.Encoded) =>
      sql`integration_id = ${page.integrationId} AND created_at >= ${page.from} AND created_at < ${page.before}
          ${page.after === null ? sql`` : sql`AND (created_at, id) > (${page.after.createdAt}, ${page.after.id})`}`

    const payoutPage = SqlSchema.findAll({
      Request: ReportPage,
      Result: PayoutReportSource,
      execute: (page) =>
        sql`SELECT id, created_at, status, user_address, from_token, COALESCE(source_amount, total_paid) AS source_amount,
              deposit_amount, service_fee, fee_legs, sell_rate, effective_usd_cop, destination_cop, total_received_cop,
              bre_b_key, account_owner_name, tx_hash, fee_tx_hash, completed_at,
              (SELECT COALESCE(hop->>'blockTime', hop->>'at') FROM jsonb_array_elements(timeline) AS hop
                WHERE hop->>'status' = 'deposit_mined' LIMIT 1) AS deposit_mined_at,
              failure->>'code' AS failure_code, failure->>'at' AS failed_at,
              refund->>'status' AS refund_status, refund->>'amount' AS refund_amount, refund->>'txHash' AS refund_tx_hash,
              provider_transfer_id, batch_id, reference
            FROM payouts WHERE ${keyset(page)}
            ORDER BY created_at, id LIMIT ${page.limit}`
    })

    const swapPage = SqlSchema.findAll({
      Request: ReportPage,
      Result: SwapReportSource,
      execute: (page) =>
        sql`SELECT id, created_at, updated_at, status, user_address, from_token, to_token, amount_in, expected_amount_out,
              min_amount_out, slippage_bps, fee_legs, tx_hash
            FROM swap_intents WHERE ${keyset(page)}
            ORDER BY created_at, id LIMIT ${page.limit}`
    })

    const payoutTotals = SqlSchema.findAll({
      Request: DayRange,
      Result: PayoutTotals,
      execute: ({ from, integrationId, to }) =>
        sql`SELECT status, from_token, count(*)::text AS count,
              sum(COALESCE(source_amount, total_paid)::numeric)::text AS source_amount,
              sum(deposit_amount::numeric)::text AS deposit_amount,
              sum(service_fee::numeric)::text AS service_fee,
              sum(destination_cop::numeric)::text AS destination_cop,
              COALESCE(sum(total_received_cop::numeric), 0)::text AS cop_delivered
            FROM payouts WHERE integration_id = ${integrationId} AND created_at >= ${from} AND created_at < ${to}
            GROUP BY status, from_token ORDER BY status, from_token`
    })

    const swapTotals = SqlSchema.findAll({
      Request: DayRange,
      Result: SwapTotals,
      execute: ({ from, integrationId, to }) =>
        sql`SELECT status, from_token, to_token, count(*)::text AS count,
              sum(amount_in::numeric)::text AS amount_in,
              sum(expected_amount_out::numeric)::text AS expected_amount_out
            FROM swap_intents WHERE integration_id = ${integrationId} AND created_at >= ${from} AND created_at < ${to}
            GROUP BY status, from_token, to_token ORDER BY status, from_token, to_token`
    })

    return {
      /** The end of a report asked now: `to`, or sooner, so that no create still in flight can land inside it. */
      endOf: (table: "payouts" | "swap_intents", integrationId: IntegrationId, to: Date) =>
        visibleBefore(sql, table, integrationId).pipe(
          Effect.map((before) => (before < to ? before : to)),
          Effect.orDie
        ),
      payoutPage: (page: ReportPage) => Effect.orDie(payoutPage(page)),
      swapPage: (page: ReportPage) => Effect.orDie(swapPage(page)),
      /** The day's sums per status and token, payouts' and swaps'. */
      totals: (range: typeof DayRange.Type) =>
        Effect.orDie(Effect.all({ payouts: payoutTotals(range), swaps: swapTotals(range) }))
    } as const
  })
}) {
  static readonly Default = Layer.effect(this, this.make)
}
