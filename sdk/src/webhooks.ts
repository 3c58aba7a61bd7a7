/** Verifying a delivery as Standard Webhooks defines it, with Web Crypto only: `v1` (HMAC-SHA256 with the endpoint's
 *  `whsec_…` secret) or `v1a` (ed25519 with the deployment's `whpk_…` public key), over `<id>.<timestamp>.<raw body>`,
 *  the timestamp within a tolerance of now. */
import { WebhookVerificationError } from "./errors.ts"
import type { webhooks } from "./generated/openapi.ts"
import { webCrypto } from "./platform.ts"

/** Every event the service delivers, by `type` (the contract's `webhooks` section). */
export type WebhookEvent = {
  [T in keyof webhooks]: webhooks[T] extends { post: { requestBody?: infer R } }
    ? NonNullable<R> extends { content: { "application/json": infer B } } ? B : never
    : never
}[keyof webhooks]

/** A `Headers`, or a plain object of them as Node's `req.headers` is. */
export type WebhookHeaders = Headers | Readonly<Record<string, string | ReadonlyArray<string> | undefined>>

export interface VerifyOptions {
  /** How far `webhook-timestamp` may be from now, in seconds (default 300, Standard Webhooks' own). */
  readonly toleranceSeconds?: number
  /** Now, in milliseconds (default `Date.now()`). */
  readonly now?: number
}

const encoder = new TextEncoder()

/**
 * The event a delivery carries, once its signature is checked against `key`: the endpoint's `whsec_…` secret (`v1`),
 * or the deployment's `whpk_…` public key (`v1a`, from `GET /api/integrations/webhook-signing-key`). Pass several keys
 * to accept any of them (a secret and the one it replaced, during a rotation). `rawBody` is the body's bytes as
 * received, before any JSON parsing. Throws `WebhookVerificationError` saying what is wrong.
 */
export const verifyWebhook = async (
  rawBody: string | Uint8Array,
  headers: WebhookHeaders,
  key: string | ReadonlyArray<string>,
  options: VerifyOptions = {}
): Promise<WebhookEvent> => {
  const id = header(headers, "webhook-id")
  const timestamp = header(headers, "webhook-timestamp")
  const signatures = header(headers, "webhook-signature")
  if (id === undefined || timestamp === undefined || signatures === undefined) {
    throw new WebhookVerificationError("missing webhook-id, webhook-timestamp or webhook-signature")
  }
  if (!/^\d+$/.test(timestamp)) throw new WebhookVerificationError("webhook-timestamp is not whole seconds")
  const tolerance = options.toleranceSeconds ?? 300
  if (Math.abs((options.now ?? Date.now()) / 1000 - Number(timestamp)) > tolerance) {
    throw new WebhookVerificationError(`webhook-timestamp is more than ${tolerance} s from now`)
  }
  const body = typeof rawBody === "string" ? encoder.encode(rawBody) : rawBody
  const signed = concat(encoder.encode(`${id}.${timestamp}.`), body)
  const offered = signatures.split(" ").map((entry) => entry.split(","))
  for (const each of typeof key === "string" ? [key] : key) {
    const scheme = schemeOf(each)
    for (const [version, signature] of offered) {
      if (version === scheme && signature !== undefined && await verifies(scheme, each, signature, signed)) {
        return JSON.parse(new TextDecoder().decode(body)) as WebhookEvent
      }
    }
  }
  throw new WebhookVerificationError("no signature in webhook-signature matches the key")
}

const schemeOf = (key: string): "v1" | "v1a" => {
  if (key.startsWith("whsec_")) return "v1"
  if (key.startsWith("whpk_")) return "v1a"
  throw new TypeError("the key is neither an endpoint's secret (whsec_…) nor the signing public key (whpk_…)")
}

const verifies = async (scheme: "v1" | "v1a", key: string, signature: string, signed: Uint8Array<ArrayBuffer>) => {
  const { subtle } = await webCrypto()
  const signatureBytes = fromBase64(signature)
  if (signatureBytes === undefined) return false
  const keyBytes = fromBase64(key.slice(scheme === "v1" ? "whsec_".length : "whpk_".length))
  if (keyBytes === undefined) throw new TypeError("the key's part after its prefix is not base64")
  const cryptoKey = scheme === "v1"
    ? await subtle.importKey("raw", keyBytes, { name: "HMAC", hash: "SHA-256" }, false, ["verify"])
    : await subtle.importKey("raw", keyBytes, { name: "Ed25519" }, false, ["verify"])
  // subtle.verify compares in constant time
  return subtle.verify(scheme === "v1" ? "HMAC" : "Ed25519", cryptoKey, signatureBytes, signed)
}

const header = (headers: WebhookHeaders, name: string): string | undefined => {
  if (typeof (headers as Headers).get === "function") return (headers as Headers).get(name) ?? undefined
  const record = headers as Readonly<Record<string, string | ReadonlyArray<string> | undefined>>
  const value = record[name] ?? Object.entries(record).find(([each]) => each.toLowerCase() === name)?.[1]
  return typeof value === "string" ? value : value?.join(" ")
}

const concat = (a: Uint8Array, b: Uint8Array): Uint8Array<ArrayBuffer> => {
  const joined = new Uint8Array(a.length + b.length)
  joined.set(a)
  joined.set(b, a.length)
  return joined
}

const fromBase64 = (text: string): Uint8Array<ArrayBuffer> | undefined => {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text)) return undefined
  const binary = atob(text)
  return Uint8Array.from(binary, (char) => char.charCodeAt(0))
}
