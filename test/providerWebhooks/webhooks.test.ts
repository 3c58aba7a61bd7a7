import { SqlClient } from "effect/sql"
import { Effect } from "effect"
import { describe, expect } from "vitest"
import { httpTest } from "../support/fixture.ts"
import { BREB, call, createConfirmedPayout, createPayout, expectErrorBody } from "../support/http.ts"
import {
  deliverProviderWebhook,
  newProviderKeyPair,
  providerEnvelope,
  signProviderWebhook
} from "../support/providerWebhooks.ts"
import type { TestServer } from "../support/server.ts"

const MINUTE = 60 * 1000

const providerKeys = newProviderKeyPair()

/** One server per describe: without a provider key (the mock default), and with one. */
const itWithoutKey = httpTest()
const itWithKey = httpTest({
  env: { PROVIDER_WEBHOOK_PUBLIC_KEY: providerKeys.publicKey, MOCK_LIFECYCLE_DELAY_MS: "600000" }
})
const newKeyPair = newProviderKeyPair

const signature = (rawBody: string, options: { readonly at?: number; readonly privateKey?: string } = {}) =>
  signProviderWebhook(rawBody, options.privateKey ?? providerKeys.privateKey, options.at)

const envelope = (fields: { category?: string; type?: string; object?: Record<string, unknown> } = {}) =>
  providerEnvelope({
    category: fields.category ?? "transfer",
    type: fields.type ?? "transfer.updated.status_transitioned",
    object: fields.object ?? { id: "tr_unknown", state: "payment_processed" }
  })

const deliver = deliverProviderWebhook

describe("without a configured provider key (mock default)", () => {
  itWithoutKey("rejects every call with 401 invalid_webhook_signature", async ({ server }) => {
    const body = envelope()
    expectErrorBody(await deliver(server, body), 401, "invalid_webhook_signature")
    expectErrorBody(await deliver(server, body, signature(body)), 401, "invalid_webhook_signature")
  })
})

describe("with PROVIDER_WEBHOOK_PUBLIC_KEY", () => {
  const transferIdOf = async (server: TestServer, payoutId: string) => {
    const rows = await server.run(Effect.flatMap(
      SqlClient.SqlClient,
      (sql) => sql<{ provider_transfer_id: string }>`SELECT provider_transfer_id FROM payouts WHERE id = ${payoutId}`
    ))
    expect(rows).toHaveLength(1)
    return rows[0]!.provider_transfer_id
  }

  const statusOf = async (server: TestServer, apiKey: string, payoutId: string) => {
    const answer = await call(server, `${BREB}/payouts/${payoutId}`, { apiKey })
    expect(answer.status, answer.text).toBe(200)
    return answer.body as { status: string; receipt: { status: string; completedAt: string | null } }
  }

  const transferEvent = async (server: TestServer, transferId: string, state: string) => {
    const body = envelope({ object: { id: transferId, state } })
    const answer = await deliver(server, body, signature(body))
    expect(answer.status, answer.text).toBe(200)
    expect(answer.body).toEqual({ received: true, duplicate: false })
  }

  itWithKey("acknowledges a correctly signed event once, then as a duplicate", async ({ server }) => {
    const body = envelope()
    const header = signature(body)
    const first = await deliver(server, body, header)
    expect(first.status, first.text).toBe(200)
    expect(first.body).toEqual({ received: true, duplicate: false })
    const again = await deliver(server, body, header)
    expect(again.status, again.text).toBe(200)
    expect(again.body).toEqual({ received: true, duplicate: true })
    // a retry signed afresh is still the same event
    const resigned = await deliver(server, body, signature(body))
    expect(resigned.body).toEqual({ received: true, duplicate: true })
  })

  itWithKey(
    "rejects a missing, malformed or wrong signature with 401 invalid_webhook_signature",
    async ({ server }) => {
      const body = envelope()
      const header = signature(body)
      const tampered = body.replace("payment_processed", "payment_submitted")
      const cases: ReadonlyArray<readonly [string, string | undefined]> = [
        ["no header", undefined],
        ["empty header", ""],
        ["garbage header", "not-a-signature"],
        ["no v0", `t=${Date.now()}`],
        ["v0 not base64", `t=${Date.now()},v0=%%%`],
        ["timestamp changed after signing", header.replace(/^t=(\d+)/, (_, t: string) => `t=${Number(t) + 1}`)],
        ["body changed after signing", header],
        ["bytes flipped", header.replace(/v0=(.)/, (_, c: string) => `v0=${c === "A" ? "B" : "A"}`)]
      ]
      for (const [name, signatureHeader] of cases) {
        const raw = name === "body changed after signing" ? tampered : body
        const answer = await deliver(server, raw, signatureHeader)
        expect(`${name}: ${answer.status}`).toBe(`${name}: 401`)
        expectErrorBody(answer, 401, "invalid_webhook_signature")
      }
      // none of the rejected deliveries was recorded: the genuine one is still new
      expect((await deliver(server, body, signature(body))).body).toEqual({ received: true, duplicate: false })
    }
  )

  itWithKey("rejects a stale timestamp (11 minutes old) even with a valid signature", async ({ server }) => {
    const body = envelope()
    const stale = await deliver(server, body, signature(body, { at: Date.now() - 11 * MINUTE }))
    expectErrorBody(stale, 401, "invalid_webhook_signature")
    const recent = await deliver(server, body, signature(body, { at: Date.now() - 9 * MINUTE }))
    expect(recent.status, recent.text).toBe(200)
  })

  itWithKey("rejects an event signed with another key", async ({ server }) => {
    const body = envelope()
    const forged = await deliver(server, body, signature(body, { privateKey: newKeyPair().privateKey }))
    expectErrorBody(forged, 401, "invalid_webhook_signature")
  })

  itWithKey("answers 400 for a signed body that is not an event envelope", async ({ server }) => {
    for (const body of ["{\"hello\":\"world\"}", "[]", JSON.stringify({ event_id: "x" })]) {
      expectErrorBody(await deliver(server, body, signature(body)), 400)
    }
  })

  itWithKey("acknowledges and ignores an unknown event category", async ({ server }) => {
    const body = envelope({ category: "customer", type: "customer.updated", object: { id: "cus_1" } })
    const answer = await deliver(server, body, signature(body))
    expect(answer.status, answer.text).toBe(200)
    expect(answer.body).toEqual({ received: true, duplicate: false })
  })

  itWithKey(
    "moves a confirmed payout to completed on payment_processed, and never back",
    async ({ server, partner }) => {
      const payout = await createConfirmedPayout(server, partner.apiKey)
      expect(payout.status).toBe("deposit_confirmed")
      const transferId = await transferIdOf(server, payout.payoutId)

      await transferEvent(server, transferId, "payment_processed")
      const completed = await statusOf(server, partner.apiKey, payout.payoutId)
      expect(completed.status).toBe("completed")
      expect(completed.receipt.status).toBe("completed")
      expect(completed.receipt.completedAt).not.toBeNull()

      await transferEvent(server, transferId, "payment_submitted")
      await transferEvent(server, transferId, "funds_received")
      const after = await statusOf(server, partner.apiKey, payout.payoutId)
      expect(after.status).toBe("completed")
      expect(after.receipt.completedAt).toBe(completed.receipt.completedAt)
    }
  )

  itWithKey(
    "moves a payout forward step by step: payment_submitted → processing → payment_processed → completed",
    async ({ server, partner }) => {
      const payout = await createConfirmedPayout(server, partner.apiKey)
      const transferId = await transferIdOf(server, payout.payoutId)
      await transferEvent(server, transferId, "payment_submitted")
      expect((await statusOf(server, partner.apiKey, payout.payoutId)).status).toBe("processing")
      await transferEvent(server, transferId, "payment_processed")
      expect((await statusOf(server, partner.apiKey, payout.payoutId)).status).toBe("completed")
    }
  )

  itWithKey("leaves a payout alone when the event is about another transfer", async ({ server, partner }) => {
    const payout = await createPayout(server, partner.apiKey)
    await transferEvent(server, "tr_someone_else", "payment_processed")
    expect((await statusOf(server, partner.apiKey, payout.payoutId)).status).toBe("awaiting_deposit")
  })
})
