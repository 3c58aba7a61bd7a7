/**
 * The request id: the client's own X-Request-Id when it cannot be a secret, else a generated one. It is echoed in
 * the response and written in every log line of the request, verbatim, so a key pasted there would be logged. A
 * client id is kept when it is
 * - 1 to 64 characters of A-Z a-z 0-9 . _ -,
 * - free of the prefixes of this service's secrets and of other vendors' well-known ones, in any letter case:
 *   `cop_live_pk_`, `cop_test_pk_`, `whsec_`; Stripe `sk_`/`rk_`/`pk_` + `live_`/`test_`; GitHub `ghp_`, `gho_`,
 *   `ghs_`, `ghu_`, `ghr_`, `github_pat_`; Slack `xox?-`; `bearer`, `BEGIN`/`END` and `PRIVATE KEY` of a PEM
 *   block; and, in their own case, AWS access key ids (`AKIA`/`ASIA` + 16), Google API keys (`AIza`) and JWTs
 *   (`eyJ`). A short prefix counts at the start or after a separator (`task_live_3` is kept, `sk_live_3` is not),
 * - without a run of 32 or more hex digits anywhere: a 32-hex token is a secret as often as it is a trace id, so
 *   W3C trace ids, a traceparent and a UUID without its dashes are replaced too (a UUID written with its dashes has
 *   runs of 12 at most and is kept),
 * - without a stretch of more than 32 characters between separators (. _ -): a key body, a token or a private key,
 * - and without a stretch of 20 or more that mixes upper-case letters, lower-case letters and digits: the shape of
 *   random base62/base64 secrets (API keys, webhook secrets, tokens), not of UUIDs or ULIDs (one case).
 * Otherwise the request gets `req_` + 17 base62 characters (12 random bytes; one of those sent back is kept).
 */
import { randomBase62 } from "../base/ids.ts"

const SHAPE = /^[A-Za-z0-9._-]{1,64}$/
/** At the start or after a separator: not preceded by a letter or digit. */
const AT_WORD = "(?<![A-Za-z0-9])"
const SECRET_PREFIX = new RegExp(
  [
    "cop_(live|test)_pk_",
    "whsec_",
    `${AT_WORD}[srp]k_(live|test)_`,
    `${AT_WORD}(gh[pousr]_|github_pat_)`,
    `${AT_WORD}xox[a-z]-`,
    "bearer",
    "-----(begin|end)",
    "private[._-]?key"
  ].join("|"),
  "i"
)
const SECRET_PREFIX_CASED = new RegExp(`${AT_WORD}((AKIA|ASIA)[A-Z0-9]{16}|AIza|eyJ)`)
const HEX_RUN = /[0-9a-f]{32}/i
const LONGEST_STRETCH = 32
const MIXED_STRETCH = 20

const looksRandom = (stretch: string) =>
  stretch.length > LONGEST_STRETCH ||
  (stretch.length >= MIXED_STRETCH && /[A-Z]/.test(stretch) && /[a-z]/.test(stretch) && /[0-9]/.test(stretch))

/** `candidate` may be written to the logs as the request's id. */
export const isSafeRequestId = (candidate: string): boolean =>
  SHAPE.test(candidate) && !SECRET_PREFIX.test(candidate) && !SECRET_PREFIX_CASED.test(candidate) &&
  !HEX_RUN.test(candidate) && !candidate.split(/[._-]/).some(looksRandom)

const generateRequestId = (): string => {
  // a random body could start with a short prefix above (`eyJ…`, once in about 240,000): draw again, so an id of ours
  // sent back is always kept
  for (;;) {
    const id = `req_${randomBase62(12)}`
    if (isSafeRequestId(id)) return id
  }
}

/** The id this request goes by: the client's X-Request-Id when safe, else a generated one. */
export const requestIdOf = (incoming: string | undefined): string =>
  incoming !== undefined && isSafeRequestId(incoming) ? incoming : generateRequestId()
