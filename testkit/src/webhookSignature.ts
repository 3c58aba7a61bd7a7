/**
 * Standard Webhooks in the kit: the signature `listen` and the receiver kit put on what they send, and the check the
 * event scenarios make of what a deployment delivers.
 */
import { createHmac, createPrivateKey, randomBytes, sign, timingSafeEqual, verify } from "node:crypto"
import { isEd25519Pem, newEd25519Pem, publicKeyOfRaw, rawPublicKey } from "./ed25519.ts"

/** `whsec_` and the key's bytes in base64. */
export const isWebhookSecret = (text: string): boolean => /^whsec_[A-Za-z0-9+/]+={0,2}$/.test(text)

/** A new secret: `whsec_` and 32 random bytes in base64. */
export const newWebhookSecret = (): string => `whsec_${randomBytes(32).toString("base64")}`

/** base64 HMAC-SHA256, keyed with the base64 after `whsec_` (or the whole secret without it), of "<id>.<timestamp>.<body>". */
const hmac = (secret: string, id: string, timestamp: string, body: string | Uint8Array): string =>
  createHmac("sha256", Buffer.from(secret.startsWith("whsec_") ? secret.slice("whsec_".length) : secret, "base64"))
    .update(`${id}.${timestamp}.`).update(body).digest("base64")

/** An ed25519 private key in PEM (PKCS#8): what signs `v1a` deliveries. */
export const isV1aSigningKey = isEd25519Pem

/** A new `v1a` signing key: an ed25519 private key in PEM. */
export const newV1aSigningKey = newEd25519Pem

/** The public key a receiver verifies a `v1a` signing key's deliveries with: `whpk_` and its 32 raw bytes in base64. */
export const v1aPublicKey = (signingKey: string): string =>
  `whpk_${rawPublicKey(createPrivateKey(signingKey)).toString("base64")}`

/**
 * The `webhook-signature` entry of one signer: an endpoint's secret (`whsec_…`) signs `v1,<HMAC>`; an ed25519 private
 * key in PEM signs `v1a,<ed25519 signature>`, both of "<id>.<timestamp>.<body>".
 */
export const signature = (signer: string, id: string, timestamp: string, body: string | Uint8Array): string =>
  signer.startsWith("-----BEGIN")
    ? `v1a,${
      sign(null, Buffer.concat([Buffer.from(`${id}.${timestamp}.`), Buffer.from(body)]), createPrivateKey(signer))
        .toString("base64")
    }`
    : `v1,${hmac(signer, id, timestamp, body)}`

/** A signer of the same kind as `signer` that no receiver has: a new secret, or a new ed25519 key. */
export const anotherSigner = (signer: string): string =>
  signer.startsWith("-----BEGIN") ? newV1aSigningKey() : newWebhookSecret()

export type WebhookHeaderName = "webhook-id" | "webhook-timestamp" | "webhook-signature"

/** The Standard Webhooks headers of a delivery, in this order: its id, the timestamp, a signature per signer. */
export const webhookHeaders = (
  secrets: ReadonlyArray<string>,
  id: string,
  timestamp: string,
  body: string | Uint8Array
): ReadonlyArray<readonly [WebhookHeaderName, string]> => [
  ["webhook-id", id],
  ["webhook-timestamp", timestamp],
  ["webhook-signature", secrets.map((secret) => signature(secret, id, timestamp, body)).join(" ")]
]

/** How far a delivery's `webhook-timestamp` may be from now (Standard Webhooks' recommended tolerance). */
export const TIMESTAMP_TOLERANCE_SECONDS = 5 * 60

export interface SignedDelivery {
  readonly id: string
  readonly timestamp: string
  readonly signature: string
  readonly body: string
}

/**
 * Why a delivery does not verify with `secret` under Standard Webhooks, or undefined when it does: one of the
 * space-separated `v1,<base64>` signatures must equal HMAC-SHA256(key, "<id>.<timestamp>.<body>"), where key is the
 * base64 after `whsec_`, and the timestamp must be within five minutes of now.
 */
export const signatureProblem = (
  secret: string,
  delivery: SignedDelivery,
  nowMs: number = Date.now()
): string | undefined => {
  const framing = framingProblem(delivery, nowMs)
  if (framing !== undefined) return framing
  const expected = Buffer.from(hmac(secret, delivery.id, delivery.timestamp, delivery.body))
  const matches = delivery.signature.split(" ").some((candidate) => {
    const [version, value = ""] = candidate.split(",", 2)
    const given = Buffer.from(value)
    return version === "v1" && given.length === expected.length && timingSafeEqual(given, expected)
  })
  return matches
    ? undefined
    : "no v1 signature matches HMAC-SHA256 of \"<id>.<timestamp>.<body>\" with the endpoint's secret"
}

/** The headers present, the timestamp whole seconds within the tolerance; else why not. */
const framingProblem = (delivery: SignedDelivery, nowMs: number): string | undefined => {
  if (delivery.id === "" || delivery.timestamp === "" || delivery.signature === "") {
    return "missing webhook-id, webhook-timestamp or webhook-signature"
  }
  if (!/^[0-9]+$/.test(delivery.timestamp)) return `webhook-timestamp ${delivery.timestamp} is not whole seconds`
  const skew = Math.abs(nowMs / 1000 - Number(delivery.timestamp))
  if (skew > TIMESTAMP_TOLERANCE_SECONDS) return `webhook-timestamp is ${Math.round(skew)} s away from now`
  return undefined
}

/** The ed25519 public key of `whpk_<base64 of its 32 raw bytes>`, or undefined when it is not one. */
const publicKeyOf = (whpk: string) => {
  const raw = Buffer.from(whpk.replace(/^whpk_/, ""), "base64")
  if (!whpk.startsWith("whpk_") || raw.length !== 32) return undefined
  return publicKeyOfRaw(raw)
}

/**
 * Why a delivery does not verify with the deployment's public key under Standard Webhooks `v1a`, or undefined when
 * it does: one of the space-separated `v1a,<base64>` signatures must be an ed25519 signature of "<id>.<timestamp>.<body>"
 * by `whpk` (`GET webhook-signing-key`), and the timestamp within five minutes of now.
 */
export const v1aSignatureProblem = (
  whpk: string,
  delivery: SignedDelivery,
  nowMs: number = Date.now()
): string | undefined => {
  const framing = framingProblem(delivery, nowMs)
  if (framing !== undefined) return framing
  const key = publicKeyOf(whpk)
  if (key === undefined) return `the published public key ${whpk} is not whpk_ and 32 bytes in base64`
  const signed = Buffer.from(`${delivery.id}.${delivery.timestamp}.${delivery.body}`)
  const matches = delivery.signature.split(" ").some((candidate) => {
    const [version, value = ""] = candidate.split(",", 2)
    return version === "v1a" && verify(null, signed, key, Buffer.from(value, "base64"))
  })
  return matches
    ? undefined
    : "no v1a signature is an ed25519 signature of \"<id>.<timestamp>.<body>\" by the published public key"
}
