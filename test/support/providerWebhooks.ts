/** The payout provider's side of its webhooks, for tests: its RSA key pair, signed envelopes, delivery. */
import { createSign, generateKeyPairSync, randomUUID } from "node:crypto"
import { call } from "./http.ts"
import type { TestServer } from "./server.ts"

export const PROVIDER_WEBHOOK = "/api/integrations/webhooks/provider"

export const newProviderKeyPair = () =>
  generateKeyPairSync("rsa", {
    modulusLength: 2048,
    publicKeyEncoding: { type: "spki", format: "pem" },
    privateKeyEncoding: { type: "pkcs8", format: "pem" }
  })

/** `X-Webhook-Signature: t=<ms>,v0=<base64 RSA-SHA256 over "<t>.<raw body>">` (DESIGN §3, Webhooks). */
export const signProviderWebhook = (rawBody: string, privateKey: string, at: number = Date.now()) => {
  const signer = createSign("RSA-SHA256")
  signer.update(`${at}.${rawBody}`)
  return `t=${at},v0=${signer.sign(privateKey, "base64")}`
}

export const providerEnvelope = (
  fields: { category: string; type: string; object: Record<string, unknown>; id?: string }
) =>
  JSON.stringify({
    event_id: fields.id ?? `wh_${randomUUID()}`,
    event_category: fields.category,
    event_type: fields.type,
    event_object: fields.object,
    event_created_at: new Date().toISOString()
  })

export const deliverProviderWebhook = (
  target: Pick<TestServer, "baseUrl">,
  rawBody: string,
  signatureHeader?: string
) =>
  call(target, PROVIDER_WEBHOOK, {
    body: rawBody,
    headers: signatureHeader === undefined ? {} : { "x-webhook-signature": signatureHeader }
  })
