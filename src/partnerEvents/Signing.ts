import { createHmac, randomBytes } from "node:crypto"
import { Redacted } from "effect"

const PREFIX = "whsec_"

/** A new Standard Webhooks secret: `whsec_` + base64 of 32 random bytes. */
export const newSigningSecret = (): Redacted.Redacted<string> =>
  Redacted.make(`${PREFIX}${randomBytes(32).toString("base64")}`)

const keyBytes = (secret: Redacted.Redacted<string>): Buffer => {
  const text = Redacted.value(secret)
  return Buffer.from(text.startsWith(PREFIX) ? text.slice(PREFIX.length) : text, "base64")
}

/** `v1,<base64 HMAC-SHA256(key, "<id>.<timestamp>.<body>")>` for one secret. */
const signature = (secret: Redacted.Redacted<string>, signed: string): string =>
  `v1,${createHmac("sha256", keyBytes(secret)).update(signed).digest("base64")}`

/**
 * The three Standard Webhooks headers for one delivery. With `signV1a` (an endpoint whose scheme is `v1a`) the one
 * ed25519 signature of the deployment's key; else every active secret signs (space-separated), so a receiver that
 * still holds the previous secret during a rotation keeps verifying.
 */
export const signatureHeaders = (input: {
  readonly eventId: string
  readonly timestampSeconds: number
  readonly body: string
  readonly secrets: ReadonlyArray<Redacted.Redacted<string>>
  readonly signV1a?: ((signed: string) => string) | undefined
}): Record<string, string> => {
  const signed = `${input.eventId}.${input.timestampSeconds}.${input.body}`
  return {
    "webhook-id": input.eventId,
    "webhook-timestamp": String(input.timestampSeconds),
    "webhook-signature": input.signV1a === undefined
      ? input.secrets.map((secret) => signature(secret, signed)).join(" ")
      : input.signV1a(signed)
  }
}
