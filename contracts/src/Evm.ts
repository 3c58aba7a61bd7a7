/**
 * The little of Ethereum the contract needs, without a client library: Keccak-256 and EIP-55 checksummed addresses
 * (the `Address` schema accepts only checksummed ones). viem did this before; with its dependencies it installs
 * ~80 MB, most of what installing the contract (and the conformance kit on it) cost.
 *
 * Keccak-f[1600] on 32-bit halves of its 64-bit lanes (a Uint32Array of 50: lane i is words 2i, low, and 2i+1,
 * high, little-endian as the bytes are absorbed), the layout fast JavaScript implementations use. Checked against
 * viem in testkit/test/evm.test.ts.
 */

/** Where each lane moves in the π step, as a word index, and its ρ rotation, in the order the steps chain them. */
const PI: Array<number> = []
const RHO: Array<number> = []
/** The ι round constants, split into low and high words. */
const IOTA_LOW = new Uint32Array(24)
const IOTA_HIGH = new Uint32Array(24)

for (let round = 0, lfsr = 1, x = 1, y = 0; round < 24; round++) {
  ;[x, y] = [y, (2 * x + 3 * y) % 5]
  PI.push(2 * (5 * y + x))
  RHO.push((((round + 1) * (round + 2)) / 2) % 64)
  let constant = 0n
  for (let j = 0; j < 7; j++) {
    lfsr = ((lfsr << 1) ^ ((lfsr >> 7) * 0x71)) % 256
    if (lfsr & 2) constant ^= 1n << ((1n << BigInt(j)) - 1n)
  }
  IOTA_LOW[round] = Number(constant & 0xffffffffn)
  IOTA_HIGH[round] = Number(constant >> 32n)
}

/** The low and the high word of a 64-bit rotation left by `by` (never 0 or 32 here) of (high, low). */
const rotlLow = (low: number, high: number, by: number) =>
  by > 32 ? (high << (by - 32)) | (low >>> (64 - by)) : (low << by) | (high >>> (32 - by))
const rotlHigh = (low: number, high: number, by: number) =>
  by > 32 ? (low << (by - 32)) | (high >>> (64 - by)) : (high << by) | (low >>> (32 - by))

const keccakF = (s: Uint32Array, b: Uint32Array) => {
  for (let round = 0; round < 24; round++) {
    // θ
    for (let x = 0; x < 10; x++) b[x] = s[x]! ^ s[x + 10]! ^ s[x + 20]! ^ s[x + 30]! ^ s[x + 40]!
    for (let x = 0; x < 10; x += 2) {
      const next = (x + 2) % 10
      const previous = (x + 8) % 10
      const low = rotlLow(b[next]!, b[next + 1]!, 1) ^ b[previous]!
      const high = rotlHigh(b[next]!, b[next + 1]!, 1) ^ b[previous + 1]!
      for (let y = 0; y < 50; y += 10) {
        s[x + y] = s[x + y]! ^ low
        s[x + y + 1] = s[x + y + 1]! ^ high
      }
    }
    // ρ and π
    let low = s[2]!
    let high = s[3]!
    for (let t = 0; t < 24; t++) {
      const to = PI[t]!
      const rotatedLow = rotlLow(low, high, RHO[t]!)
      const rotatedHigh = rotlHigh(low, high, RHO[t]!)
      low = s[to]!
      high = s[to + 1]!
      s[to] = rotatedLow
      s[to + 1] = rotatedHigh
    }
    // χ
    for (let y = 0; y < 50; y += 10) {
      for (let x = 0; x < 10; x++) b[x] = s[y + x]!
      for (let x = 0; x < 10; x++) s[y + x] = s[y + x]! ^ (~b[(x + 2) % 10]! & b[(x + 4) % 10]!)
    }
    // ι
    s[0] = s[0]! ^ IOTA_LOW[round]!
    s[1] = s[1]! ^ IOTA_HIGH[round]!
  }
}

const RATE = 136

// The state's bytes are read through its words: the words must be little-endian (every platform Node runs on is).
if (new Uint8Array(new Uint32Array([1]).buffer)[0] !== 1) {
  throw new Error("Evm.ts: a big-endian platform is not supported")
}

/** Keccak-256 (Ethereum's, with the original 0x01 padding, not SHA3-256's 0x06). */
export const keccak256 = (input: Uint8Array): Uint8Array => {
  const padded = new Uint8Array((Math.floor(input.length / RATE) + 1) * RATE)
  padded.set(input)
  padded[input.length] = 0x01
  padded[padded.length - 1] = padded[padded.length - 1]! | 0x80
  const state = new Uint32Array(50)
  const bytes = new Uint8Array(state.buffer) // little-endian words, as the lanes are defined
  const scratch = new Uint32Array(10)
  for (let offset = 0; offset < padded.length; offset += RATE) {
    for (let i = 0; i < RATE; i++) bytes[i] = bytes[i]! ^ padded[offset + i]!
    keccakF(state, scratch)
  }
  return bytes.slice(0, 32)
}

/** 0x and 40 hex digits, in any letter case (no checksum check). */
export const isAddress = (value: string): boolean => /^0x[0-9a-fA-F]{40}$/.test(value)

/** The EIP-55 checksummed form of an address (0x and 40 hex digits, any case). */
export const checksumAddress = (address: string): string => {
  if (!isAddress(address)) throw new Error(`not an address: ${address}`)
  const lower = address.slice(2).toLowerCase()
  const hash = keccak256(new TextEncoder().encode(lower))
  let out = "0x"
  // Each hex digit of the address is upper case where the hash's matching nibble is 8 or more.
  for (let i = 0; i < 40; i++) {
    out += ((hash[i >> 1]! >> (i % 2 === 0 ? 4 : 0)) & 0xf) >= 8
      ? lower[i]!.toUpperCase()
      : lower[i]!
  }
  return out
}
