/**
 * The little of Ethereum the kit needs, without a client library: Keccak-256, EIP-55 checksummed addresses, and
 * fresh addresses to use as end users. (The kit never signs: an address only has to be new and well formed.) viem
 * did this before; with its dependencies it installs ~80 MB, more than half of the packed kit's install size.
 */

const MASK = (1n << 64n) - 1n

/** Round constants of Keccak-f[1600]. */
const ROUND_CONSTANTS = [
  0x0000000000000001n, 0x0000000000008082n, 0x800000000000808an, 0x8000000080008000n,
  0x000000000000808bn, 0x0000000080000001n, 0x8000000080008081n, 0x8000000000008009n,
  0x000000000000008an, 0x0000000000000088n, 0x0000000080008009n, 0x000000008000000an,
  0x000000008000808bn, 0x800000000000008bn, 0x8000000000008089n, 0x8000000000008003n,
  0x8000000000008002n, 0x8000000000000080n, 0x000000000000800an, 0x800000008000000an,
  0x8000000080008081n, 0x8000000000008080n, 0x0000000080000001n, 0x8000000080008008n
] as const

/** Rotation of lane (x, y), at index x + 5y (the ρ step). */
const ROTATIONS = [
  0n, 1n, 62n, 28n, 27n,
  36n, 44n, 6n, 55n, 20n,
  3n, 10n, 43n, 25n, 39n,
  41n, 45n, 15n, 21n, 8n,
  18n, 2n, 61n, 56n, 14n
] as const

const rotl = (value: bigint, by: bigint): bigint => (by === 0n ? value : ((value << by) | (value >> (64n - by))) & MASK)

const keccakF = (state: Array<bigint>): void => {
  const c: Array<bigint> = [0n, 0n, 0n, 0n, 0n]
  const b: Array<bigint> = new Array<bigint>(25).fill(0n)
  for (const roundConstant of ROUND_CONSTANTS) {
    for (let x = 0; x < 5; x++) c[x] = state[x]! ^ state[x + 5]! ^ state[x + 10]! ^ state[x + 15]! ^ state[x + 20]!
    for (let x = 0; x < 5; x++) {
      const d = c[(x + 4) % 5]! ^ rotl(c[(x + 1) % 5]!, 1n)
      for (let y = 0; y < 25; y += 5) state[x + y] = state[x + y]! ^ d
    }
    for (let x = 0; x < 5; x++) {
      for (let y = 0; y < 5; y++) b[y + 5 * ((2 * x + 3 * y) % 5)] = rotl(state[x + 5 * y]!, ROTATIONS[x + 5 * y]!)
    }
    for (let y = 0; y < 25; y += 5) {
      for (let x = 0; x < 5; x++) state[x + y] = b[x + y]! ^ (~b[((x + 1) % 5) + y]! & MASK & b[((x + 2) % 5) + y]!)
    }
    state[0] = state[0]! ^ roundConstant
  }
}

const RATE = 136

/** Keccak-256 (Ethereum's, with the original 0x01 padding, not SHA3-256's 0x06). */
export const keccak256 = (input: Uint8Array): Uint8Array => {
  const padded = new Uint8Array((Math.floor(input.length / RATE) + 1) * RATE)
  padded.set(input)
  padded[input.length] = 0x01
  padded[padded.length - 1] = padded[padded.length - 1]! | 0x80
  const state = new Array<bigint>(25).fill(0n)
  for (let offset = 0; offset < padded.length; offset += RATE) {
    for (let lane = 0; lane < RATE / 8; lane++) {
      let value = 0n
      for (let byte = 7; byte >= 0; byte--) value = (value << 8n) | BigInt(padded[offset + lane * 8 + byte]!)
      state[lane] = state[lane]! ^ value
    }
    keccakF(state)
  }
  const out = new Uint8Array(32)
  for (let i = 0; i < 32; i++) out[i] = Number((state[i >> 3]! >> BigInt(8 * (i & 7))) & 0xffn)
  return out
}

const toHex = (bytes: Uint8Array): string => Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("")

/** 0x and 40 hex digits, in any letter case (no checksum check). */
export const isAddress = (value: string): boolean => /^0x[0-9a-fA-F]{40}$/.test(value)

/** The EIP-55 checksummed form of an address (0x and 40 hex digits, any case). */
export const checksumAddress = (address: string): string => {
  if (!isAddress(address)) throw new Error(`not an address: ${address}`)
  const lower = address.slice(2).toLowerCase()
  const hash = toHex(keccak256(new TextEncoder().encode(lower)))
  let out = "0x"
  for (let i = 0; i < 40; i++) out += Number.parseInt(hash[i]!, 16) >= 8 ? lower[i]!.toUpperCase() : lower[i]!
  return out
}

/** A new EIP-55 checksummed address nobody has used (20 random bytes). */
export const randomAddress = (): string => checksumAddress(`0x${toHex(crypto.getRandomValues(new Uint8Array(20)))}`)
