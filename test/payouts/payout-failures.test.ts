/**
 * Why a payout did not go through, and where its deposit went (issue #29, parts 2 and 3): a signed Bridge `transfer`
 * event in a failing state carries its return reason; the payout records `failure` (the documented code, category,
 * retryable, message) once, and, when the provider returns the deposit, `refund` (pending, then sent with the
 * provider's transaction, a `refunded` timeline hop saying so). The mock's test helper produces the same.
 */
import { SqlClient } from "effect/sql"
import { FAILURE_CODES, type Payout } from "@cop-integrations/contracts"
import { Effect } from "effect"
import { describe, expect } from "vitest"
import { httpTest } from "../support/fixture.ts"
import type { TestServer } from "../support/server.ts"
import type { Partner } from "../support/flows.ts"
import { BREB, call, createConfirmedPayout, newTxHash } from "../support/http.ts"
import {
  deliverProviderWebhook,
  newProviderKeyPair,
  providerEnvelope,
  signProviderWebhook
} from "../support/providerWebhooks.ts"

const providerKeys = newProviderKeyPair()

const it = httpTest({
  captureLogs: true,
  // no reconciler run during a test: it would verify the mock chain's refunds (test/worker/refund-verify.test.ts covers that)
  env: {
    PROVIDER_WEBHOOK_PUBLIC_KEY: providerKeys.publicKey,
    MOCK_LIFECYCLE_DELAY_MS: "600000",
    RECONCILE_INTERVAL_MS: "3600000"
  }
})

const transferIdOf = async (server: TestServer, payoutId: string) => {
  const rows = await server.run(Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql<{ provider_transfer_id: string }>`SELECT provider_transfer_id FROM payouts WHERE id = ${payoutId}`
  ))
  return rows[0]!.provider_transfer_id
}

/** A signed `transfer` event about the payout, with the transfer's other fields as given. */
const providerSays = async (
  server: TestServer,
  payoutId: string,
  state: string,
  fields: Record<string, unknown> = {}
) => {
  const object = { id: await transferIdOf(server, payoutId), state, ...fields }
  const body = providerEnvelope({ category: "transfer", type: "transfer.updated.status_transitioned", object })
  const answer = await deliverProviderWebhook(server, body, signProviderWebhook(body, providerKeys.privateKey))
  expect(answer.status, answer.text).toBe(200)
}

const payoutOf = async (server: TestServer, partner: Partner, payoutId: string) => {
  const answer = await call(server, `${BREB}/payouts/${payoutId}`, { apiKey: partner.apiKey })
  expect(answer.status, answer.text).toBe(200)
  return answer.body as Payout
}

/** A payout whose deposit the partner confirmed (mock chain). */
const depositedPayout = async (server: TestServer, partner: Partner) =>
  (await createConfirmedPayout(server, partner.apiKey)) as unknown as Payout

describe("a payout the provider could not deliver", () => {
  it("records the reason the provider gave, from the documented table, once", async ({ server, partner }) => {
    const payout = await depositedPayout(server, partner)
    await providerSays(server, payout.payoutId, "undeliverable", { return_details: { reason: "account_not_found" } })
    const failed = await payoutOf(server, partner, payout.payoutId)
    expect(failed.status).toBe("failed")
    const { action: _, ...row } = FAILURE_CODES.breb_key_not_found
    expect(failed.failure).toEqual({ code: "breb_key_not_found", ...row, at: expect.any(String) })
    expect(failed.refund).toBeNull()

    // returned afterwards with another reason: the first reason stays; the refund is pending until a transaction
    await providerSays(server, payout.payoutId, "returned", { return_details: { reason: "rejected_by_bank" } })
    const returned = await payoutOf(server, partner, payout.payoutId)
    expect(returned.status).toBe("refunded")
    expect(returned.failure).toEqual(failed.failure)
    expect(returned.refund).toMatchObject({ status: "pending", to: payout.userAddress, token: "USDC", txHash: null })
  })

  it("a state without a reason it knows falls back to what the state means", async ({ server, partner }) => {
    const payout = await depositedPayout(server, partner)
    await providerSays(server, payout.payoutId, "undeliverable", {
      return_details: { reason: "some_reason_added_later" }
    })
    expect((await payoutOf(server, partner, payout.payoutId)).failure).toMatchObject({
      code: "rejected_by_bank",
      category: "rail"
    })
    const other = await depositedPayout(server, partner)
    await providerSays(server, other.payoutId, "error")
    expect((await payoutOf(server, partner, other.payoutId)).failure).toMatchObject({
      code: "provider_error",
      retryable: true
    })
  })

  it("a refund sent: amount, what was retained, the transaction, and a refunded hop saying sent", async ({ server, partner }) => {
    const payout = await depositedPayout(server, partner)
    await providerSays(server, payout.payoutId, "returned", { return_details: { reason: "account_closed" } })
    const refundTx = newTxHash()
    await providerSays(server, payout.payoutId, "refunded", { refund: { amount: "1.5", tx_hash: refundTx } })
    const refunded = await payoutOf(server, partner, payout.payoutId)
    expect(refunded.failure).toMatchObject({ code: "account_inactive", category: "destination", retryable: false })
    expect(refunded.refund).toMatchObject({ status: "sent", amount: "1.5", txHash: refundTx, to: payout.userAddress })
    expect(refunded.refund!.retained).not.toBeNull()
    expect(refunded.timeline.slice(-2)).toEqual([
      expect.objectContaining({ status: "refunded", source: "provider_webhook" }),
      expect.objectContaining({ status: "refunded", refundStatus: "sent", source: "provider_webhook" })
    ])
    expect(refunded.receipt.commission.note).toContain("not returned")

    // the same word again changes nothing
    await providerSays(server, payout.payoutId, "refunded", { refund: { amount: "1.5", tx_hash: refundTx } })
    expect((await payoutOf(server, partner, payout.payoutId)).timeline).toEqual(refunded.timeline)
  })

  it("an unreadable refund or reason is logged and ignored; the state still applies, never a 500", async ({ server, partner }) => {
    const payout = await depositedPayout(server, partner)
    await providerSays(server, payout.payoutId, "returned", {
      return_details: 42,
      refund: { amount: "-1", tx_hash: "nope" }
    })
    const returned = await payoutOf(server, partner, payout.payoutId)
    expect(returned.status).toBe("refunded")
    expect(returned.failure?.code).toBe("returned_by_bank")
    expect(returned.refund).toMatchObject({ status: "pending", amount: null, txHash: null })
    expect(server.logs.some((line) => line.includes("refund is not readable"))).toBe(true)
  })
})

describe("the sandbox's advance helper", () => {
  it("failed and refunded carry a failure, refunded a refund with the mock provider's transaction", async ({ server, partner }) => {
    const payout = await depositedPayout(server, partner)
    const answer = await call(server, `/api/integrations/test-helpers/payouts/${payout.payoutId}/advance`, {
      apiKey: partner.apiKey,
      method: "POST",
      body: { to: "refunded" }
    })
    expect(answer.status, answer.text).toBe(200)
    const refunded = answer.body as Payout
    expect(refunded.failure?.code).toBe("returned_by_bank")
    expect(refunded.refund).toMatchObject({ status: "sent", amount: payout.deposit.amount, retained: "0" })
    expect(refunded.refund!.txHash).toMatch(/^0x[0-9a-f]{64}$/)
  })
})
