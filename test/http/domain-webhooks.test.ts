import { SqlClient } from "effect/sql"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Payout } from "@cop-integrations/contracts"
import { BREB, call, createPayout, expectErrorBody, newTxHash } from "../support/http.ts"
import {
  deliverProviderWebhook,
  newProviderKeyPair,
  providerEnvelope,
  signProviderWebhook
} from "../support/providerWebhooks.ts"
import { startTestServer, type TestServer } from "../support/server.ts"

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

let server: TestServer

beforeAll(async () => {
  server = await startTestServer({
    env: { PROVIDER_WEBHOOK_PUBLIC_KEY: providerKeys.publicKey, MOCK_LIFECYCLE_DELAY_MS: "600000" }
  })
})
afterAll(() => server?.close())

const deliver = (rawBody: string, signatureHeader: string) => deliverProviderWebhook(server, rawBody, signatureHeader)

describe("provider webhook timestamps", () => {
  it("accepts a timestamp slightly ahead (clock skew) but rejects one minutes in the future", async () => {
    const skewed = transferEnvelope("tr_unknown", "payment_processed")
    const accepted = await deliver(skewed, signature(skewed, Date.now() + 30 * SECOND))
    expect(accepted.status, accepted.text).toBe(200)

    for (const ahead of [2 * MINUTE, 9 * MINUTE]) {
      const body = transferEnvelope("tr_unknown", "payment_processed")
      const answer = await deliver(body, signature(body, Date.now() + ahead))
      expect(`${ahead / MINUTE} min ahead: ${answer.status}`).toBe(`${ahead / MINUTE} min ahead: 401`)
      expectErrorBody(answer, 401, "invalid_webhook_signature")
    }
  })

  it("still rejects a timestamp older than 10 minutes and accepts one just under", async () => {
    const body = transferEnvelope("tr_unknown", "payment_processed")
    expectErrorBody(
      await deliver(body, signature(body, Date.now() - 10 * MINUTE - 5 * SECOND)),
      401,
      "invalid_webhook_signature"
    )
    expect((await deliver(body, signature(body, Date.now() - 9 * MINUTE))).status).toBe(200)
  })
})

describe("provider events for a payout the partner has not confirmed yet", () => {
  let apiKey: string
  beforeAll(async () => {
    ;({ apiKey } = await server.newIntegration())
  })

  const transferIdOf = async (payoutId: string) => {
    const rows = await server.run(Effect.flatMap(
      SqlClient.SqlClient,
      (sql) => sql<{ provider_transfer_id: string }>`SELECT provider_transfer_id FROM payouts WHERE id = ${payoutId}`
    ))
    expect(rows).toHaveLength(1)
    return rows[0]!.provider_transfer_id
  }

  const providerSays = async (payoutId: string, state: string) => {
    const body = transferEnvelope(await transferIdOf(payoutId), state)
    const answer = await deliver(body, signature(body))
    expect(answer.status, answer.text).toBe(200)
    expect(answer.body).toEqual({ received: true, duplicate: false })
  }

  const payoutOf = async (payoutId: string) => {
    const answer = await call(server, `${BREB}/payouts/${payoutId}`, { apiKey })
    expect(answer.status, answer.text).toBe(200)
    return answer.body as Payout
  }

  const confirm = (payoutId: string, body: Record<string, string>) =>
    call(server, `${BREB}/payouts/${payoutId}/confirm`, { apiKey, body })

  const legs = (payout: Payout) => Object.fromEntries(payout.fees.map((leg) => [leg.code, leg.status]))

  it("payment_submitted records the deposit (provider legs pending), and a later confirm is accepted and records the txHash", async () => {
    const payout = await createPayout(server, apiKey)
    await providerSays(payout.payoutId, "payment_submitted")
    const processing = await payoutOf(payout.payoutId)
    expect(processing.status).toBe("processing")
    expect(processing.txHash).toBeNull()
    expect(legs(processing)).toEqual({ bridge_fx: "pending", bridge: "pending", copby: "pending" })

    const txHash = newTxHash()
    const confirmed = await confirm(payout.payoutId, { txHash, feeTxHash: newTxHash() })
    expect(confirmed.status, confirmed.text).toBe(200)
    expect(confirmed.body.status).toBe("processing")
    expect(confirmed.body.txHash).toBe(txHash)
    expect(legs(confirmed.body)).toEqual({ bridge_fx: "pending", bridge: "pending", copby: "verified" })

    // the same hash again is idempotent; the hash now belongs to this payout
    const again = await confirm(payout.payoutId, { txHash })
    expect(again.status, again.text).toBe(200)
    expect(again.body).toEqual(confirmed.body)
    const other = await createPayout(server, apiKey)
    expectErrorBody(await confirm(other.payoutId, { txHash }), 409, "tx_hash_reused")

    // the provider carries on from where it is
    await providerSays(payout.payoutId, "payment_processed")
    const completed = await payoutOf(payout.payoutId)
    expect(completed.status).toBe("completed")
    expect(completed.txHash).toBe(txHash)
    expect(legs(completed)).toEqual({ bridge_fx: "verified", bridge: "verified", copby: "verified" })
  })

  it("payment_processed completes a never-confirmed payout, which a confirm then completes with its txHash", async () => {
    const payout = await createPayout(server, apiKey)
    await providerSays(payout.payoutId, "payment_processed")
    const completed = await payoutOf(payout.payoutId)
    expect(completed.status).toBe("completed")
    expect(completed.txHash).toBeNull()
    expect(completed.receipt.completedAt).not.toBeNull()

    const txHash = newTxHash()
    const confirmed = await confirm(payout.payoutId, { txHash })
    expect(confirmed.status, confirmed.text).toBe(200)
    // the status stays; the timeline gains the deposit's block, which the confirm verified
    expect(confirmed.body).toEqual({
      ...completed,
      txHash,
      updatedAt: confirmed.body.updatedAt,
      timeline: [...completed.timeline, { status: "deposit_mined", at: expect.any(String), source: "mock_chain" }]
    })
  })

  it("funds_received moves it to deposit_confirmed; a confirm with a hash used elsewhere is still tx_hash_reused", async () => {
    const used = await createPayout(server, apiKey)
    const usedHash = newTxHash()
    expect((await confirm(used.payoutId, { txHash: usedHash })).status).toBe(200)

    const payout = await createPayout(server, apiKey)
    await providerSays(payout.payoutId, "funds_received")
    const seen = await payoutOf(payout.payoutId)
    expect(seen.status).toBe("deposit_confirmed")
    expect(seen.txHash).toBeNull()

    expectErrorBody(
      await confirm(payout.payoutId, { txHash: usedHash.toUpperCase().replace("0X", "0x") }),
      409,
      "tx_hash_reused"
    )
    expect(await payoutOf(payout.payoutId)).toEqual(seen)
  })

  it("accepts the confirm of a payout the provider has seen even after its deposit window", async () => {
    const payout = await createPayout(server, apiKey)
    await providerSays(payout.payoutId, "payment_submitted")
    await server.run(Effect.flatMap(
      SqlClient.SqlClient,
      (sql) => sql`UPDATE payouts SET expires_at = now() - interval '1 minute' WHERE id = ${payout.payoutId}`
    ))
    const txHash = newTxHash()
    const confirmed = await confirm(payout.payoutId, { txHash })
    expect(confirmed.status, confirmed.text).toBe(200)
    expect(confirmed.body.txHash).toBe(txHash)
  })

  it("still refuses to confirm a payout that failed before the provider saw any deposit", async () => {
    const payout = await createPayout(server, apiKey)
    await providerSays(payout.payoutId, "error")
    expect((await payoutOf(payout.payoutId)).status).toBe("failed")
    expectErrorBody(await confirm(payout.payoutId, { txHash: newTxHash() }), 409)
  })
})
