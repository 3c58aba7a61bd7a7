import { createHash } from "node:crypto"

/**
 * The provider's `Idempotency-Key` for a create, as a UUID derived from what we stored before the call (the
 * payout id, the customer's owner): a retry, from this process or after a crash, reaches the same provider object.
 */
export const providerIdempotencyKey = (purpose: string, ...parts: ReadonlyArray<string>): string => {
  const hex = createHash("sha256").update([purpose, ...parts].join("\u0000")).digest("hex")
  const variant = ((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16)
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${
    hex.slice(20, 32)
  }`
}
