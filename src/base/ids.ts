import { EndpointId, IntegrationId, KeyId, PayoutBatchId, PayoutId, QuoteId, SwapId } from "@cop-integrations/contracts"

const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

/** How many base62 characters hold `byteLength` bytes. */
const base62Width = (byteLength: number) => Math.ceil((byteLength * 8) / Math.log2(62))

/** Base62 text of `bytes`, left-padded to a fixed width so every encoding of n bytes has the same length. */
export const base62 = (bytes: Uint8Array): string => {
  let value = 0n
  for (const byte of bytes) value = (value << 8n) | BigInt(byte)
  let out = ""
  while (value > 0n) {
    out = alphabet[Number(value % 62n)] + out
    value /= 62n
  }
  return out.padStart(base62Width(bytes.length), "0")
}

/** Random bytes drawn from a pool refilled 4 KiB at a time: one system call per few hundred ids, not one per id. */
const pool = new Uint8Array(4096)
let poolOffset = pool.length

const randomByte = (): number => {
  if (poolOffset === pool.length) {
    crypto.getRandomValues(pool)
    poolOffset = 0
  }
  return pool[poolOffset++]!
}

/** `byteCount` random bytes from the pool, as one unsigned integer (big-endian). */
export const randomBigInt = (byteCount: number): bigint => {
  let value = 0n
  for (let i = 0; i < byteCount; i++) value = (value << 8n) | BigInt(randomByte())
  return value
}

/**
 * Random base62 text with at least `byteLength` bytes of entropy, as wide as `base62` makes that many bytes. Each
 * character is drawn uniformly (bytes of 248 and over are rejected, so `byte % 62` has no bias).
 */
export const randomBase62 = (byteLength: number): string => {
  const width = base62Width(byteLength)
  let out = ""
  while (out.length < width) {
    const byte = randomByte()
    if (byte < 248) out += alphabet[byte % 62]
  }
  return out
}

const idTypes = {
  po: PayoutId,
  pb: PayoutBatchId,
  sw: SwapId,
  int: IntegrationId,
  we: EndpointId,
  qt: QuoteId,
  key: KeyId
}
type IdTypes = typeof idTypes

/** Resource identifiers: `po_…`, `int_…`, as their id type; 128 random bits. */
export const newId = <Prefix extends keyof IdTypes>(prefix: Prefix): IdTypes[Prefix]["Type"] =>
  idTypes[prefix].make(`${prefix}_${randomBase62(16)}`)

/** An internal id (`otp_…`) that no contract names; 128 random bits. */
export const newInternalId = (prefix: string): string => `${prefix}_${randomBase62(16)}`
