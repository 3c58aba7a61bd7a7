import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto"

/** A sign-in link's or a session's secret: 32 random bytes, base64url (43 characters). */
export const newToken = (): string => randomBytes(32).toString("base64url")

const tokenPattern = /^[A-Za-z0-9_-]{43}$/

/** Whether `text` could be a token at all (checked before any lookup). */
export const isTokenShaped = (text: string): boolean => tokenPattern.test(text)

/** How a token is stored and found: its SHA-256 (256 random bits need no slow KDF, as for API keys). */
export const hashToken = (token: string): string => createHash("sha256").update(token).digest("hex")

/**
 * The CSRF token of a session, derived from the session's own secret (HMAC keyed with it), so nothing more is stored
 * and only the holder of the cookie's value can know it: the page reads it from `GET dashboard/session`, a page of
 * another site can neither read that answer nor compute it.
 */
export const csrfTokenFor = (sessionToken: string): string =>
  createHmac("sha256", sessionToken).update("cop-dashboard-csrf").digest("base64url")

/** Compares two tokens in time independent of where they differ. */
export const sameToken = (a: string, b: string): boolean => {
  const [left, right] = [Buffer.from(a), Buffer.from(b)]
  return left.length === right.length && timingSafeEqual(left, right)
}
