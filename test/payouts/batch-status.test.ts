/**
 * A batch's status is derived from its payouts' (contracts' PayoutBatchStatus): every combination the rule tells
 * apart, each status once at least.
 */
import type { PayoutBatchStatus, PayoutStatus } from "@cop-integrations/contracts"
import { describe, expect, it } from "vitest"
import { batchStatus } from "../../src/payouts/BatchPresent.ts"

const cases: ReadonlyArray<readonly [ReadonlyArray<PayoutStatus>, PayoutBatchStatus]> = [
  [["awaiting_deposit", "awaiting_deposit"], "prepared"],
  [["awaiting_deposit", "expired"], "prepared"],
  [["deposit_confirmed", "awaiting_deposit"], "partially_confirmed"],
  [["completed", "awaiting_deposit"], "partially_confirmed"],
  [["deposit_confirmed", "processing"], "confirmed"],
  [["completed", "processing"], "confirmed"],
  [["deposit_confirmed", "expired"], "confirmed"],
  [["completed", "completed"], "completed"],
  [["completed", "failed"], "completed_with_failures"],
  [["refunded", "refunded"], "completed_with_failures"],
  [["completed", "expired"], "completed_with_failures"],
  [["expired", "expired"], "expired"]
]

describe("a batch's status", () => {
  for (const [statuses, expected] of cases) {
    it(`${statuses.join(" + ")} → ${expected}`, () => expect(batchStatus(statuses)).toBe(expected))
  }
})
