import type { KycStatus } from "@cop-integrations/contracts"

/** Bridge's KYC states in ours: approved and rejected are decisions, everything else is still pending. */
export const kycStatusOf = (providerStatus: string): KycStatus =>
  providerStatus === "approved" ? "approved" : providerStatus === "rejected" ? "rejected" : "pending"
