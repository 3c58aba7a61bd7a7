import type { KycStatus } from "@cop-integrations/contracts"

/** Bridge's KYC states in ours: approved and rejected are decisions, everything else is still pending. */
export const kycStatusOf = (providerStatus: string): KycStatus =>
  providerStatus === "approved" ? "approved" : providerStatus === "rejected" ? "rejected" : "pending"

/**
 * A customer object's KYC: its `kyc_status` when it carries one, else its overall `status`, where `active` means
 * approved (a customer is active only once its KYC is).
 */
export const customerKycStatusOf = (
  customer: { readonly kyc_status?: string | undefined; readonly status?: string | undefined }
): KycStatus =>
  customer.kyc_status !== undefined
    ? kycStatusOf(customer.kyc_status)
    : kycStatusOf(customer.status === "active" ? "approved" : customer.status ?? "")
