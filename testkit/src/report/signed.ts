/**
 * A signed report (`--report-signed`): the JSON report, with the kit's version, the target's API version and a SHA-256
 * of every exchange of every scenario, signed with ed25519, so that whoever holds the signer's public key can check
 * that this deployment passed these scenarios as the report says, and that nothing in it was changed since.
 *
 * What is signed: the bytes `<format>\n<canonical JSON of the report>`, where the canonical JSON has every object's
 * keys in code-point order and no whitespace (../canonicalJson.ts), of the report as its JSON file holds it (what JSON
 * drops, an undefined field, is not signed). A verifier recomputes them from the file's `report`, whatever its layout.
 */
import { createHash, createPrivateKey, generateKeyPairSync, sign, verify } from "node:crypto"
import { canonicalJson } from "../canonicalJson.ts"
import { ed25519PrivateKey, newEd25519Pem, publicKeyOfRaw, rawPublicKey } from "../ed25519.ts"
import type { Exchange } from "../exchange.ts"
import type { ConformanceReport } from "./types.ts"

export const SIGNED_REPORT_FORMAT = "integrations-conformance-signed-report/1"

export interface ReportSignature {
  readonly algorithm: "ed25519"
  /** The signer's public key: base64 of its 32 raw bytes. */
  readonly publicKey: string
  /** The first 16 hex digits of the SHA-256 of the raw public key: a short name to compare. */
  readonly keyId: string
  /** True when the kit made the key for this run (no --signing-key): the report is intact, but who ran it is unknown. */
  readonly ephemeral: boolean
  readonly signedAt: string
  /** base64 of the ed25519 signature. */
  readonly value: string
}

export interface SignedReport {
  readonly format: typeof SIGNED_REPORT_FORMAT
  readonly report: ConformanceReport
  readonly signature: ReportSignature
}

/**
 * The SHA-256 (hex) of one exchange: the request as recorded (method, URL, headers with keys as `$CONFORMANCE_API_KEY`,
 * body), then the answer (status, headers, body) or the error that stood in for it, as canonical JSON.
 */
export const exchangeDigest = (exchange: Exchange): string =>
  createHash("sha256").update(canonicalJson({
    request: {
      method: exchange.request.method,
      url: exchange.request.url,
      headers: exchange.request.headers,
      body: exchange.request.body ?? null
    },
    response: exchange.response === undefined
      ? null
      : { status: exchange.response.status, headers: exchange.response.headers, body: exchange.response.body },
    error: exchange.error ?? null
  })).digest("hex")

const signedBytes = (report: unknown) => Buffer.from(`${SIGNED_REPORT_FORMAT}\n${canonicalJson(report)}`, "utf8")

const keyIdOf = (raw: Buffer) => createHash("sha256").update(raw).digest("hex").slice(0, 16)

/** Why a PEM text cannot sign reports (not a private key, not ed25519), or undefined when it can. */
export const signingKeyProblem = (pem: string): string | undefined => {
  try {
    ed25519PrivateKey(pem)
    return undefined
  } catch (error) {
    return error instanceof Error ? error.message : "not a private key"
  }
}

/** A new ed25519 key pair: the private key as PEM (PKCS#8), the public key as base64 of its raw bytes. */
export const newSigningKey = (): {
  readonly privateKeyPem: string
  readonly publicKey: string
  readonly keyId: string
} => {
  const privateKeyPem = newEd25519Pem()
  const raw = rawPublicKey(createPrivateKey(privateKeyPem))
  return {
    privateKeyPem,
    publicKey: raw.toString("base64"),
    keyId: keyIdOf(raw)
  }
}

/** The report signed with the ed25519 private key in `privateKeyPem` (or with a key made for this run, `ephemeral`). */
export const signReport = (report: ConformanceReport, privateKeyPem?: string): SignedReport => {
  const privateKey = privateKeyPem === undefined
    ? generateKeyPairSync("ed25519").privateKey
    : ed25519PrivateKey(privateKeyPem)
  // the report as its JSON file holds it: what JSON drops (undefined fields) is not signed either
  const plain = JSON.parse(JSON.stringify(report)) as ConformanceReport
  const raw = rawPublicKey(privateKey)
  return {
    format: SIGNED_REPORT_FORMAT,
    report: plain,
    signature: {
      algorithm: "ed25519",
      publicKey: raw.toString("base64"),
      keyId: keyIdOf(raw),
      ephemeral: privateKeyPem === undefined,
      signedAt: new Date().toISOString(),
      value: sign(null, signedBytes(plain), privateKey).toString("base64")
    }
  }
}

export type Verification =
  | { readonly valid: true; readonly signed: SignedReport }
  | { readonly valid: false; readonly reason: string }

/**
 * Whether a signed report's text is intact and signed by the key it names (and, given `expectedPublicKey`, by that
 * key: without it, anyone could re-sign a changed report with a key of their own).
 */
export const verifySignedReport = (text: string, expectedPublicKey?: string): Verification => {
  let parsed: Partial<SignedReport>
  try {
    parsed = JSON.parse(text) as Partial<SignedReport>
  } catch {
    return { valid: false, reason: "not JSON" }
  }
  const { format, report, signature } = parsed
  if (format !== SIGNED_REPORT_FORMAT || report === undefined || signature?.algorithm !== "ed25519") {
    return { valid: false, reason: `not a signed report of format ${SIGNED_REPORT_FORMAT}` }
  }
  if (expectedPublicKey !== undefined && signature.publicKey !== expectedPublicKey) {
    return { valid: false, reason: `signed by key ${signature.keyId}, not by the expected public key` }
  }
  const raw = Buffer.from(signature.publicKey, "base64")
  if (raw.length !== 32) return { valid: false, reason: "the public key is not 32 bytes of base64" }
  const publicKey = publicKeyOfRaw(raw)
  const intact = verify(null, signedBytes(report), publicKey, Buffer.from(signature.value, "base64"))
  return intact
    ? { valid: true, signed: parsed as SignedReport }
    : {
      valid: false,
      reason: "the signature does not match the report: it was changed after signing, or signed by another key"
    }
}
