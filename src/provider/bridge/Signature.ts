import { createVerify } from "node:crypto"

export const MAX_EVENT_AGE_MS = 10 * 60 * 1000
/** How far ahead of our clock a timestamp may be (the provider's clock runs a little fast). */
export const MAX_CLOCK_SKEW_MS = 60 * 1000

export type SignatureCheck =
  | { readonly _tag: "Valid" }
  | { readonly _tag: "Invalid"; readonly reason: string }

const headerPattern = /^t=(\d{1,16}),v0=([A-Za-z0-9+/=]+)$/

/**
 * Bridge-style signature: `X-Webhook-Signature: t=<ms>,v0=<base64>`, RSA-SHA256 (PKCS#1 v1.5) over
 * `"<t>.<raw body>"`, verified with the provider's PEM public key; older than 10 minutes is stale, and
 * more than a minute ahead is refused too (otherwise a captured signature would live twice as long).
 */
export const verifyProviderSignature = (input: {
  readonly header: string | undefined
  readonly rawBody: string
  readonly publicKeyPem: string
  readonly nowMs: number
}): SignatureCheck => {
  if (input.header === undefined) return { _tag: "Invalid", reason: "missing X-Webhook-Signature header" }
  const match = headerPattern.exec(input.header.trim())
  if (match === null) return { _tag: "Invalid", reason: "malformed X-Webhook-Signature header" }
  const [, timestamp = "", signature = ""] = match
  const age = input.nowMs - Number(timestamp)
  if (age > MAX_EVENT_AGE_MS) return { _tag: "Invalid", reason: "stale webhook timestamp" }
  if (age < -MAX_CLOCK_SKEW_MS) return { _tag: "Invalid", reason: "webhook timestamp is in the future" }
  try {
    const verifier = createVerify("RSA-SHA256")
    verifier.update(`${timestamp}.${input.rawBody}`)
    return verifier.verify(input.publicKeyPem, Buffer.from(signature, "base64"))
      ? { _tag: "Valid" }
      : { _tag: "Invalid", reason: "signature does not match" }
  } catch {
    return { _tag: "Invalid", reason: "signature could not be verified" }
  }
}
