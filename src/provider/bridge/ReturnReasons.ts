import type { KnownFailureCode } from "@cop-integrations/contracts"

/**
 * Bridge's reasons for a transfer it could not deliver or sent back (`return_details.reason`), in the service's
 * failure codes. Bridge does not publish one closed list; these are the reasons the simulator sends and the ones the
 * Bre-B rail and the payout networks (dLocal's 800 series, Airwallex's failure types) name. A reason not here falls
 * back to what the transfer's state says (`FAILURE_BY_STATE`).
 */
const RETURN_REASONS: ReadonlyMap<string, KnownFailureCode> = new Map([
  ["account_not_found", "breb_key_not_found"],
  ["invalid_account", "breb_key_not_found"],
  ["key_not_found", "breb_key_not_found"],
  ["account_closed", "account_inactive"],
  ["account_blocked", "account_inactive"],
  ["account_inactive", "account_inactive"],
  ["name_mismatch", "beneficiary_name_mismatch"],
  ["beneficiary_name_mismatch", "beneficiary_name_mismatch"],
  ["limit_exceeded", "amount_limit_exceeded"],
  ["amount_exceeds_limit", "amount_limit_exceeded"],
  ["rejected_by_bank", "rejected_by_bank"],
  ["bank_rejected", "rejected_by_bank"],
  ["returned_by_bank", "returned_by_bank"],
  ["recalled", "returned_by_bank"],
  ["compliance", "compliance_rejected"],
  ["compliance_rejected", "compliance_rejected"],
  ["sanctions", "compliance_rejected"],
  ["insufficient_funds", "deposit_short"],
  ["amount_mismatch", "deposit_short"],
  ["underpaid", "deposit_short"],
  ["provider_rejected", "provider_rejected"],
  ["error", "provider_error"]
])

/** What a failing state means when Bridge gives no reason we know. */
const FAILURE_BY_STATE: ReadonlyMap<string, KnownFailureCode> = new Map([
  ["undeliverable", "rejected_by_bank"],
  ["returned", "returned_by_bank"],
  ["refunded", "returned_by_bank"],
  ["missing_return_policy", "provider_error"],
  ["error", "provider_error"],
  ["canceled", "provider_rejected"]
])

/** The failure code of a Bridge transfer in a failing state (null for the others). */
export const failureCodeOf = (state: string, reason: string | null | undefined): KnownFailureCode | null => {
  const byState = FAILURE_BY_STATE.get(state)
  if (byState === undefined) return null
  return (reason === null || reason === undefined ? undefined : RETURN_REASONS.get(reason.toLowerCase())) ?? byState
}
