import { SqlClient } from "effect/sql"
import { Effect } from "effect"
import { describe, expect } from "vitest"
import type { Payout } from "@cop-integrations/contracts"
import { httpTest } from "../support/fixture.ts"
import type { Partner } from "../support/flows.ts"
import { BREB, call, createPayout, expectErrorBody, newTxHash } from "../support/http.ts"
import {
  deliverProviderWebhook,
  newProviderKeyPair,
  providerEnvelope,
  signProviderWebhook
} from "../support/providerWebhooks.ts"
import type { TestServer } from "../support/server.ts"

const SECOND = 1000
const MINUTE = 60 * SECOND

const providerKeys = newProviderKeyPair()

const signature = (rawBody: string, at: number = Date.now()) =>
  signProviderWebhook(rawBody, providerKeys.privateKey, at)

const transferEnvelope = (transferId: string, state: string) =>
  providerEnvelope({
    category: "transfer",
    type: "transfer.updated.status_transitioned",
    object: { id: transferId, state }
  })

const it = httpTest({
  env: { PROVIDER_WEBHOOK_PUBLIC_KEY: providerKeys.publicKey, MOCK_LIFECYCLE_DELAY_MS: "600000" }
})

describe("provider webhook timestamps", () => {
  it("accepts a timestamp slightly ahead (clock skew) but rejects one minutes in the future", async ({ server }) => {
    const skewed = transferEnvelope("tr_unknown", "payment_processed")
    const accepted = await deliverProviderWebhook(server, skewed, signature(skewed, Date.now() + 30 * SECOND))
    expect(accepted.status, accepted.text).toBe(200)

    for (const ahead of [2 * MINUTE, 9 * MINUTE]) {
      const body = transferEnvelope("tr_unknown", "payment_processed")
      const answer = await deliverProviderWebhook(server, body, signature(body, Date.now() + ahead))
      expect(`${ahead / MINUTE} min ahead: ${answer.status}`).toBe(`${ahead / MINUTE} min ahead: 401`)
      expectErrorBody(answer, 401, "invalid_webhook_signature")
    }
  })

  it("still rejects a timestamp older than 10 minutes and accepts one just under", async ({ server }) => {
    const body = transferEnvelope("tr_unknown", "payment_processed")
    expectErrorBody(
      await deliverProviderWebhook(server, body, signature(body, Date.now() - 10 * MINUTE - 5 * SECOND)),
      401,
      "invalid_webhook_signature"
    )
    expect((await deliverProviderWebhook(server, body, signature(body, Date.now() - 9 * MINUTE))).status).toBe(200)
  })
})

describe("provider events for a payout the partner has not confirmed yet", () => {
  const transferIdOf = async (server: TestServer, payoutId: string) => {
    const rows = await server.run(Effect.flatMap(
      SqlClient.SqlClient,
      (sql) => sql<{ provider_transfer_id: string }>`SELECT provider_transfer_id FROM payouts WHERE id = ${payoutId}`
    ))
    expect(rows).toHaveLength(1)
    return rows[0]!.provider_transfer_id
  }

  const providerSays = async (server: TestServer, payoutId: string, state: string) => {
    const body = transferEnvelope(await transferIdOf(server, payoutId), state)
    const answer = await deliverProviderWebhook(server, body, signature(body))
    expect(answer.status, answer.text).toBe(200)
    expect(answer.body).toEqual({ received: true, duplicate: false })
  }

  const payoutOf = async (server: TestServer, partner: Partner, payoutId: string) => {
    const answer = await call(server, `${BREB}/payouts/${payoutId}`, { apiKey: partner.apiKey })
    expect(answer.status, answer.text).toBe(200)
    return answer.body as Payout
  }

  const confirm = (server: TestServer, partner: Partner, payoutId: string, body: Record<string, string>) =>
    call(server, `${BREB}/payouts/${payoutId}/confirm`, { apiKey: partner.apiKey, body })

  const legs = (payout: Payout) => Object.fromEntries(payout.fees.map((leg) => [leg.code, leg.status]))

  it("payment_submitted records the deposit (provider legs pending), and a later confirm is accepted and records the txHash", async ({ server, partner }) => {
    const payout = await createPayout(server, partner.apiKey)
    await providerSays(server, payout.payoutId, "payment_submitted")
    const processing = await payoutOf(server, partner, payout.payoutId)
    expect(processing.status).toBe("processing")
    expect(processing.txHash).toBeNull()
    expect(legs(processing)).toEqual({ bridge_fx: "pending", bridge: "pending", copby: "pending" })

    const txHash = newTxHash()
    const confirmed = await confirm(server, partner, payout.payoutId, { txHash, feeTxHash: newTxHash() })
    expect(confirmed.status, confirmed.text).toBe(200)
    expect(confirmed.body.status).toBe("processing")
    expect(confirmed.body.txHash).toBe(txHash)
    expect(legs(confirmed.body)).toEqual({ bridge_fx: "pending", bridge: "pending", copby: "verified" })

    // the same hash again is idempotent; the hash now belongs to this payout
    const again = await confirm(server, partner, payout.payoutId, { txHash })
    expect(again.status, again.text).toBe(200)
    expect(again.body).toEqual(confirmed.body)
    const other = await createPayout(server, partner.apiKey)
    expectErrorBody(await confirm(server, partner, other.payoutId, { txHash }), 409, "tx_hash_reused")

    // the provider carries on from where it is
    await providerSays(server, payout.payoutId, "payment_processed")
    const completed = await payoutOf(server, partner, payout.payoutId)
    expect(completed.status).toBe("completed")
    expect(completed.txHash).toBe(txHash)
    expect(legs(completed)).toEqual({ bridge_fx: "verified", bridge: "verified", copby: "verified" })
  })

  it("payment_processed completes a never-confirmed payout, which a confirm then completes with its txHash", async ({ server, partner }) => {
    const payout = await createPayout(server, partner.apiKey)
    await providerSays(server, payout.payoutId, "payment_processed")
    const completed = await payoutOf(server, partner, payout.payoutId)
    expect(completed.status).toBe("completed")
    expect(completed.txHash).toBeNull()
    expect(completed.receipt.completedAt).not.toBeNull()

    const txHash = newTxHash()
    const confirmed = await confirm(server, partner, payout.payoutId, { txHash })
    expect(confirmed.status, confirmed.text).toBe(200)
    // the status stays; the timeline gains the deposit's block, which the confirm verified
    expect(confirmed.body).toEqual({
      ...completed,
      txHash,
      updatedAt: confirmed.body.updatedAt,
      timeline: [...completed.timeline, { status: "deposit_mined", at: expect.any(String), source: "mock_chain" }]
    })
  })

  it("funds_received moves it to deposit_confirmed; a confirm with a hash used elsewhere is still tx_hash_reused", async ({ server, partner }) => {
    const used = await createPayout(server, partner.apiKey)
    const usedHash = newTxHash()
    expect((await confirm(server, partner, used.payoutId, { txHash: usedHash })).status).toBe(200)

    const payout = await createPayout(server, partner.apiKey)
    await providerSays(server, payout.payoutId, "funds_received")
    const seen = await payoutOf(server, partner, payout.payoutId)
    expect(seen.status).toBe("deposit_confirmed")
    expect(seen.txHash).toBeNull()

    expectErrorBody(
      await confirm(server, partner, payout.payoutId, { txHash: usedHash.toUpperCase().replace("0X", "0x") }),
      409,
      "tx_hash_reused"
    )
    expect(await payoutOf(server, partner, payout.payoutId)).toEqual(seen)
  })

  it("accepts the confirm of a payout the provider has seen even after its deposit window", async ({ server, partner }) => {
    const payout = await createPayout(server, partner.apiKey)
    await providerSays(server, payout.payoutId, "payment_submitted")
    await server.run(Effect.flatMap(
      SqlClient.SqlClient,
      (sql) => sql`UPDATE payouts SET expires_at = now() - interval '1 minute' WHERE id = ${payout.payoutId}`
    ))
    const txHash = newTxHash()
    const confirmed = await confirm(server, partner, payout.payoutId, { txHash })
    expect(confirmed.status, confirmed.text).toBe(200)
    expect(confirmed.body.txHash).toBe(txHash)
  })

  it("still refuses to confirm a payout that failed before the provider saw any deposit", async ({ server, partner }) => {
    const payout = await createPayout(server, partner.apiKey)
    await providerSays(server, payout.payoutId, "error")
    expect((await payoutOf(server, partner, payout.payoutId)).status).toBe("failed")
    expectErrorBody(await confirm(server, partner, payout.payoutId, { txHash: newTxHash() }), 409)
  })
})
