import { createHash } from "node:crypto"
import type { ApiMode } from "@cop-integrations/contracts"
import { base62, randomBase62 } from "../base/ids.ts"

export type KeyKind = "test" | "live"

const keyKinds: Record<ApiMode, KeyKind> = { mock: "test", live: "live" }

/** A mock deployment accepts test keys, a live one live keys. */
export const keyKindForMode = (mode: ApiMode): KeyKind => keyKinds[mode]

const BODY_BYTES = 32
const keyPattern = /^cop_(test|live)_pk_([0-9A-Za-z]{43})([0-9A-Za-z]{6})$/

const checksum = (prefix: string, body: string): string =>
  base62(createHash("sha256").update(`${prefix}${body}`).digest().subarray(0, 4)).padStart(6, "0").slice(-6)

/**
 * `cop_<kind>_pk_<43 base62 chars of 32 random bytes><6-char checksum>`. The checksum lets a leaked key be
 * recognised (and a typo rejected) without a database lookup.
 */
export const generateApiKey = (kind: KeyKind): string => {
  const prefix = `cop_${kind}_pk_`
  const body = randomBase62(BODY_BYTES)
  return `${prefix}${body}${checksum(prefix, body)}`
}

export type ParsedKey =
  | { readonly _tag: "Valid"; readonly kind: KeyKind; readonly hash: string }
  | { readonly _tag: "Malformed" }

/** A key's parts, when it has the shape of one (its checksum not yet checked). */
export interface KeyShape {
  readonly kind: KeyKind
  readonly body: string
  readonly sum: string
}

export const keyShape = (key: string): KeyShape | undefined => {
  const match = keyPattern.exec(key)
  if (match === null) return undefined
  // The pattern matched: its three groups are there, the first `test` or `live` (RegExp types them loosely).
  const [, kind, body, sum] = match as unknown as [string, KeyKind, string, string]
  return { kind, body, sum }
}

export const hasValidChecksum = ({ body, kind, sum }: KeyShape): boolean => checksum(`cop_${kind}_pk_`, body) === sum

export const parseApiKey = (key: string): ParsedKey => {
  const shape = keyShape(key)
  if (shape === undefined || !hasValidChecksum(shape)) return { _tag: "Malformed" }
  return { _tag: "Valid", kind: shape.kind, hash: hashApiKey(key) }
}

/** Keys carry 256 random bits, so a plain SHA-256 is enough at rest (no slow KDF needed). */
export const hashApiKey = (key: string): string => createHash("sha256").update(key).digest("hex")

export const last4 = (key: string): string => key.slice(-4)
