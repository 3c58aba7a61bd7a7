/**
 * All migrations, keyed `<id>_<name>` (the Migrator sorts by the numeric id).
 * Add a migration: create `NNNN_name.ts` exporting a default Effect, then list it here.
 */
import type { SqlClient } from "effect/sql"
import type { Effect } from "effect"
import init from "./0001_init.ts"
import providerDepositSeen from "./0002_provider_deposit_seen.ts"
import jobsDeadAndExpiryIndex from "./0003_jobs_dead_and_expiry_index.ts"
import housekeeping from "./0004_housekeeping.ts"
import customerProviderIndex from "./0005_customer_provider_index.ts"
import txHashClaimState from "./0006_tx_hash_claim_state.ts"
import idempotencyState from "./0007_idempotency_state.ts"
import payoutTotalReceived from "./0008_payout_total_received.ts"
import swapIntents from "./0009_swap_intents.ts"
import payoutSourceAmount from "./0010_payout_source_amount.ts"
import partnerEvents from "./0011_partner_events.ts"
import workNotifications from "./0012_work_notifications.ts"
import apiKeyLifecycle from "./0013_api_key_lifecycle.ts"
import payoutsReconcileExpired from "./0014_payouts_reconcile_expired.ts"
import quoteSwapSellAmount from "./0015_quote_swap_sell_amount.ts"
import eventDeliveriesLeased from "./0016_event_deliveries_leased.ts"
import eventSequence from "./0017_event_sequence.ts"
import payoutTimeline from "./0018_payout_timeline.ts"
import destinationPreviews from "./0019_destination_previews.ts"
import destinationVerificationBudgets from "./0020_destination_verification_budgets.ts"
import eventPositions from "./0021_event_positions.ts"
import payoutFailureRefund from "./0022_payout_failure_refund.ts"
import requestLogs from "./0023_request_logs.ts"
import dashboardFilters from "./0024_dashboard_filters.ts"
import dashboardSessions from "./0025_dashboard_sessions.ts"
import requestLogSessions from "./0026_request_log_sessions.ts"
import replicaLeases from "./0027_replica_leases.ts"
import metricsIndexes from "./0028_metrics_indexes.ts"
import traceContext from "./0029_trace_context.ts"
import payoutBatches from "./0030_payout_batches.ts"
import batchConfirm from "./0031_batch_confirm.ts"
import keyScopes from "./0032_key_scopes.ts"
import keyIpAllowlist from "./0033_key_ip_allowlist.ts"
import auditLog from "./0034_audit_log.ts"
import webhookSignatures from "./0035_webhook_signatures.ts"
import webhookReplays from "./0036_webhook_replays.ts"

export const migrations: Record<string, Effect.Effect<void, unknown, SqlClient.SqlClient>> = {
  "0001_init": init,
  "0002_provider_deposit_seen": providerDepositSeen,
  "0003_jobs_dead_and_expiry_index": jobsDeadAndExpiryIndex,
  "0004_housekeeping": housekeeping,
  "0005_customer_provider_index": customerProviderIndex,
  "0006_tx_hash_claim_state": txHashClaimState,
  "0007_idempotency_state": idempotencyState,
  "0008_payout_total_received": payoutTotalReceived,
  "0009_swap_intents": swapIntents,
  "0010_payout_source_amount": payoutSourceAmount,
  "0011_partner_events": partnerEvents,
  "0012_work_notifications": workNotifications,
  "0013_api_key_lifecycle": apiKeyLifecycle,
  "0014_payouts_reconcile_expired": payoutsReconcileExpired,
  "0015_quote_swap_sell_amount": quoteSwapSellAmount,
  "0016_event_deliveries_leased": eventDeliveriesLeased,
  "0017_event_sequence": eventSequence,
  "0018_payout_timeline": payoutTimeline,
  "0019_destination_previews": destinationPreviews,
  "0020_destination_verification_budgets": destinationVerificationBudgets,
  "0021_event_positions": eventPositions,
  "0022_payout_failure_refund": payoutFailureRefund,
  "0023_request_logs": requestLogs,
  "0024_dashboard_filters": dashboardFilters,
  "0025_dashboard_sessions": dashboardSessions,
  "0026_request_log_sessions": requestLogSessions,
  "0027_replica_leases": replicaLeases,
  "0028_metrics_indexes": metricsIndexes,
  "0029_trace_context": traceContext,
  "0030_payout_batches": payoutBatches,
  "0031_batch_confirm": batchConfirm,
  "0032_key_scopes": keyScopes,
  "0033_key_ip_allowlist": keyIpAllowlist,
  "0034_audit_log": auditLog,
  "0035_webhook_signatures": webhookSignatures,
  "0036_webhook_replays": webhookReplays
}
