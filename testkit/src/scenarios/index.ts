import type { Scenario } from "../scenario.ts"
import { apiKeyScenarios } from "./apiKeys.ts"
import { authScenarios } from "./auth.ts"
import { batchScenarios } from "./batches.ts"
import { cancelScenarios } from "./cancel.ts"
import { confirmScenarios } from "./confirm.ts"
import { contractScenarios } from "./contract.ts"
import { dashboardScenarios } from "./dashboard.ts"
import { errorScenarios } from "./errors.ts"
import { eventScenarios } from "./events.ts"
import { healthScenarios } from "./health.ts"
import { idempotencyScenarios } from "./idempotency.ts"
import { kycScenarios } from "./kyc.ts"
import { lifecycleScenarios } from "./lifecycle.ts"
import { listScenarios } from "./list.ts"
import { negativeScenarios } from "./negative.ts"
import { payoutScenarios } from "./payouts.ts"
import { previewScenarios } from "./preview.ts"
import { quoteScenarios } from "./quote.ts"
import { reportScenarios } from "./reports.ts"
import { requestLogScenarios } from "./requestLogs.ts"
import { auditLogScenarios } from "./auditLog.ts"
import { sandboxScenarios } from "./sandbox.ts"
import { sequenceScenarios } from "./sequences.ts"
import { swapScenarios } from "./swaps.ts"
import { tenancyScenarios } from "./tenancy.ts"
import { webhookScenarios } from "./webhooks.ts"

/** Every scenario, in the order they start (the slow lifecycle ones early, so they overlap the rest). */
export const allScenarios: ReadonlyArray<Scenario> = [
  ...quoteScenarios,
  ...lifecycleScenarios,
  ...sequenceScenarios,
  ...healthScenarios,
  ...authScenarios,
  ...dashboardScenarios,
  ...contractScenarios,
  ...kycScenarios,
  ...payoutScenarios,
  ...batchScenarios,
  ...previewScenarios,
  ...idempotencyScenarios,
  ...confirmScenarios,
  ...cancelScenarios,
  ...listScenarios,
  ...tenancyScenarios,
  ...apiKeyScenarios,
  ...swapScenarios,
  ...webhookScenarios,
  ...eventScenarios,
  ...requestLogScenarios,
  ...auditLogScenarios,
  ...reportScenarios,
  ...sandboxScenarios,
  ...errorScenarios,
  ...negativeScenarios
]
