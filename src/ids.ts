const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

/** Base62 text of `bytes`, left-padded to a fixed width so every encoding of n bytes has the same length. */
export const base62 = (bytes: Uint8Array): string => {
  let value = 0n
  for (const byte of bytes) value = (value << 8n) | BigInt(byte)
  let out = ""
  while (value > 0n) {
    out = alphabet[Number(value % 62n)] + out
    value /= 62n
  }
  const width = Math.ceil((bytes.length * 8) / Math.log2(62))
  return out.padStart(width, "0")
}

export const randomBase62 = (byteLength: number): string =>
  base62(crypto.getRandomValues(new Uint8Array(byteLength)))

/** Resource identifiers: `po_…`, `int_…`; 128 random bits. */
export const newId = (prefix: string): string => `${prefix}_${randomBase62(16)}`
