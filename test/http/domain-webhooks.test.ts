import { createSign, generateKeyPairSync, randomUUID } from "node:crypto"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { BREB, call, expectErrorBody } from "../support/http.ts"
import { startTestServer, type TestServer } from "../support/server.ts"

const WEBHOOK = "/api/integrations/webhooks/provider"
const SECOND = 1000
const MINUTE = 60 * SECOND

const providerKeys = generateKeyPairSync("rsa", {
  modulusLength: 2048,
  publicKeyEncoding: { type: "spki", format: "pem" },
  privateKeyEncoding: { type: "pkcs8", format: "pem" }
})

const signature = (rawBody: string, at: number = Date.now()) => {
  const signer = createSign("RSA-SHA256")
  signer.update(`${at}.${rawBody}`)
  return `t=${at},v0=${signer.sign(providerKeys.privateKey, "base64")}`
}

const transferEnvelope = (transferId: string, state: string) =>
  JSON.stringify({
    event_id: `wh_${randomUUID()}`,
    event_category: "transfer",
    event_type: "transfer.updated.status_transitioned",
    event_object: { id: transferId, state },
    event_created_at: new Date().toISOString()
  })

let server: TestServer

beforeAll(async () => {
  server = await startTestServer({
    env: { PROVIDER_WEBHOOK_PUBLIC_KEY: providerKeys.publicKey, MOCK_LIFECYCLE_DELAY_MS: "600000" }
  })
})
afterAll(() => server?.close())

const deliver = (rawBody: string, signatureHeader: string) =>
  call(server, WEBHOOK, { body: rawBody, headers: { "x-webhook-signature": signatureHeader } })

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
    expectErrorBody(await deliver(body, signature(body, Date.now() - 10 * MINUTE - 5 * SECOND)), 401, "invalid_webhook_signature")
    expect((await deliver(body, signature(body, Date.now() - 9 * MINUTE))).status).toBe(200)
  })
})
