/**
 * The ed25519 keys the kit handles: those that sign `v1a` deliveries (the receiver kit) and those that sign reports
 * (`--report-signed`). A private key travels as PEM (PKCS#8), a public key as its 32 raw bytes.
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from "node:crypto"

/** A new private key, as PEM. */
export const newEd25519Pem = (): string =>
  generateKeyPairSync("ed25519").privateKey.export({ format: "pem", type: "pkcs8" }).toString()

/** The ed25519 private key of a PEM text; anything else throws, saying what it is instead. */
export const ed25519PrivateKey = (pem: string): KeyObject => {
  const key = createPrivateKey(pem)
  if (key.asymmetricKeyType !== "ed25519") {
    throw new Error(`the key is ${key.asymmetricKeyType ?? "not an asymmetric key"}, not ed25519`)
  }
  return key
}

/** Whether a text is an ed25519 private key in PEM. */
export const isEd25519Pem = (text: string): boolean => {
  if (!text.startsWith("-----BEGIN")) return false
  try {
    ed25519PrivateKey(text)
    return true
  } catch {
    return false
  }
}

/** The 32 raw bytes of the public key of `key` (a private or a public key). */
export const rawPublicKey = (key: KeyObject): Buffer =>
  createPublicKey(key).export({ format: "der", type: "spki" }).subarray(-32)

/** The public key of 32 raw bytes. */
export const publicKeyOfRaw = (raw: Buffer): KeyObject =>
  createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: raw.toString("base64url") }, format: "jwk" })
