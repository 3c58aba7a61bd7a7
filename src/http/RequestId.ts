/**
 * The request id: the client's own X-Request-Id when it cannot be a secret, else a generated one. It is echoed in
 * the response and written in every log line of the request, verbatim, so a key pasted there would be logged. A
 * client id is kept when it is
 * - 1 to 64 characters of A-Z a-z 0-9 . _ -,
 * - free of this service's secret prefixes (`cop_live_pk_`, `cop_test_pk_`, `whsec_`, in any letter case),
 * - without a stretch of more than 32 characters between separators (. _ -): a UUID or a trace id written without
 *   dashes has 32; a key body, a token or a hex private key is longer,
 * - and without a stretch of 20 or more that mixes upper-case letters, lower-case letters and digits: the shape of
 *   random base62/base64 secrets (API keys, webhook secrets, tokens), not of UUIDs, ULIDs or trace ids (one case).
 * Otherwise the request gets `req_` + 17 base62 characters (12 random bytes; one of those sent back is kept).
 */
import { randomBase62 } from "../base/ids.ts"

const SHAPE = /^[A-Za-z0-9._-]{1,64}$/
const SECRET_PREFIX = /cop_(live|test)_pk_|whsec_/i
const LONGEST_STRETCH = 32
const MIXED_STRETCH = 20

const looksRandom = (stretch: string) =>
  stretch.length > LONGEST_STRETCH ||
  (stretch.length >= MIXED_STRETCH && /[A-Z]/.test(stretch) && /[a-z]/.test(stretch) && /[0-9]/.test(stretch))

/** `candidate` may be written to the logs as the request's id. */
export const isSafeRequestId = (candidate: string): boolean =>
  SHAPE.test(candidate) && !SECRET_PREFIX.test(candidate) && !candidate.split(/[._-]/).some(looksRandom)

const generateRequestId = (): string => `req_${randomBase62(12)}`

/** The id this request goes by: the client's X-Request-Id when safe, else a generated one. */
export const requestIdOf = (incoming: string | undefined): string =>
  incoming !== undefined && isSafeRequestId(incoming) ? incoming : generateRequestId()
