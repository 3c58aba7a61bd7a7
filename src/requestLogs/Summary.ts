/**
 * What a request log keeps of a request and its answer: bounded summaries with every secret taken out.
 *
 * Values are kept by an allow-list of field names (the contract's fields that never hold a secret: ids, statuses,
 * amounts, times, addresses, names); any other value reads `[redacted]`, so a field no one thought of (an OTP `code`,
 * `debugCode`, a webhook `secret`, a field a partner invents) is never kept. Field names are shown (a 400 for an
 * unknown field is then readable), unless one looks like a secret itself. A kept string is still refused when it
 * carries the shape of one of this service's secrets (an API key, a webhook secret, a bearer token), and cut at 64
 * characters. Some fields are kept masked: a Bre-B key as logs show it (last 4), an e-mail as `m***@example.com`, a
 * URL as its origin (webhook URLs often carry a token in their path or query). The query string has an allow-list of
 * its own (the contract's parameters), and so have headers (never Authorization or a cookie).
 *
 * Bounds: three levels of nesting, three items per array, 20 fields per object, 40 values in all (past them a marker
 * says how many were left out), so a summary stays within about 2 KiB whatever was sent, and is cheap to make.
 */
import { maskBreBKey } from "../destinations/BreBKeyMask.ts"

export const REDACTED = "[redacted]"

/** This service's secrets (API keys, webhook secrets) and bearer tokens, anywhere in a text, in any letter case. */
const SECRET_SOURCE = String.raw`cop_(?:live|test)_pk_[A-Za-z0-9_-]*|whsec_[A-Za-z0-9+/=_-]*|bearer\s+\S+`
const SECRET = new RegExp(SECRET_SOURCE, "i")
const SECRETS = new RegExp(SECRET_SOURCE, "gi")

/**
 * A long run of base62/base64 characters that mixes cases and digits and is not hex: the body of a key or secret
 * sent without its prefix (a checksummed address or a transaction hash is hex, an id is shorter).
 */
const TOKEN_RUN = /[A-Za-z0-9+/=_-]{40,}/g
const HEX = /^(0x)?[0-9a-fA-F]+$/
const isTokenLike = (run: string) =>
  !HEX.test(run) && /[A-Z]/.test(run) && /[a-z]/.test(run) && /[0-9]/.test(run) && /[g-zG-Z]/.test(run)

/** The shortest text SECRET can match (`whsec_`). */
const SHORTEST_SECRET = 6

export const looksSecret = (text: string): boolean =>
  text.length >= SHORTEST_SECRET &&
  (SECRET.test(text) || (text.length >= 40 && (text.match(TOKEN_RUN) ?? []).some(isTokenLike)))

/** `text` with every secret-shaped part replaced. */
export const scrubSecrets = (text: string): string =>
  text.replace(SECRETS, REDACTED).replace(TOKEN_RUN, (run) => (isTokenLike(run) ? REDACTED : run))

const MAX_STRING = 64
const MAX_DEPTH = 3
const MAX_ITEMS = 3
const MAX_FIELDS = 20
const MAX_VALUES = 40

// eslint-disable-next-line no-control-regex -- NUL on purpose: PostgreSQL refuses it
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g

/**
 * A text as stored: at most `max` characters, and storable (PostgreSQL's text and jsonb refuse NUL and lone
 * surrogates, which a query string or a JSON escape can carry, and which a cut can make).
 */
const cut = (text: string, max = MAX_STRING) => storable(text.length > max ? `${text.slice(0, max)}…` : text)

// Both tests are native and almost always pass; the replacement's scan is for the rare text they refuse.
const storable = (text: string) =>
  text.isWellFormed() && !text.includes("\u0000") ? text : text.replace(UNSTORABLE, "\uFFFD")

type Rule = "keep" | "message" | "breBKey" | "email" | "url"

const keep = (names: string): ReadonlyArray<readonly [string, Rule]> =>
  names.trim().split(/\s+/).map((name) => [name, "keep"])

/**
 * The contract's fields whose values are never secret, and how the others that may be shown are shown. Maps, not
 * objects: a field named `constructor` must find no rule (an object would hand it Object's own member).
 */
const FIELD_RULES: ReadonlyMap<string, Rule> = new Map([
  ...keep(`
    id payoutId quoteId previewId intentId eventId endpointId endpointIds resourceId integrationId requestId keyId
    status kycStatus refundStatus match type events category retryable outcome action mode source transactionType
    currency displayCurrency chain chainId fromToken toToken errorCode failureCode disabledReason responseStatus
    sequence cached atomicRequired duplicate statusClass
    destinationCop amount amountIn amountUsd sourceAmount totalPaid totalReceived received retained displayAmount
    display exchangeRate effectiveUsdCop sellRateUsdCop commission minAmountOut expectedAmountOut slippageBps
    at createdAt updatedAt expiresAt completedAt attemptedAt blockTime createdFrom createdTo
    userAddress address to from txHash feeTxHash approvalTarget
    accountOwnerName beneficiaryName bankName breBKeyLast4 documentLast4 title note
    limit nextCursor cursor durationMs method path format date final count
    batchId reference index depositAmount serviceFee depositError itemCount
  `),
  ["error", "message"],
  ["message", "message"],
  ["breBKey", "breBKey"],
  ["email", "email"],
  ["url", "url"],
  ["kycUrl", "url"]
])

/**
 * Fields kept only inside a given parent: names that elsewhere commonly hold a secret (`code` an OTP code, `token` or
 * `value` anything).
 */
const QUALIFIED_RULES: Readonly<Record<string, Rule>> = {
  "failure.code": "keep",
  "fees.code": "keep",
  "feesItemized.code": "keep",
  "refund.token": "keep",
  "transaction.value": "keep",
  "feeTransaction.value": "keep",
  "approvalTransaction.value": "keep",
  "calls.value": "keep"
}

/** The query parameters of the contract; any other parameter's value reads `[redacted]`. */
const QUERY_RULES: ReadonlyMap<string, Rule> = new Map(keep(`
  destinationCop fromToken createdFrom createdTo limit cursor type statusClass path errorCode requestId
`))

/** QUALIFIED_RULES by parent, then field: looked up without building the `parent.field` text for every field. */
const RULES_BY_PARENT = new Map<string, Map<string, Rule>>()
for (const [qualified, rule] of Object.entries(QUALIFIED_RULES)) {
  const [parent = "", field = ""] = qualified.split(".")
  RULES_BY_PARENT.set(parent, (RULES_BY_PARENT.get(parent) ?? new Map<string, Rule>()).set(field, rule))
}

const ruleOf = (parent: string | undefined, field: string): Rule | undefined =>
  (parent === undefined ? undefined : RULES_BY_PARENT.get(parent)?.get(field)) ?? FIELD_RULES.get(field)

/** An e-mail as the KYC read shows it: first character, `***`, `@` and the domain. */
const maskEmail = (email: string) => {
  const at = email.lastIndexOf("@")
  return at < 1 ? REDACTED : cut(`${email[0]}***@${email.slice(at + 1)}`)
}

/** A URL's origin, `/…` marking that it had more (a path or query that may carry a token). */
const originOf = (url: string) => {
  if (!URL.canParse(url)) return REDACTED
  const parsed = new URL(url)
  if (parsed.origin === "null") return REDACTED
  const more = parsed.pathname !== "/" || parsed.search !== "" || parsed.hash !== ""
  return `${cut(parsed.origin)}${more ? "/…" : ""}`
}

/**
 * An error message without the values it quotes from the request: the decode errors end a field's rule with
 * `, actual <value>` (up to the next field's `; `), and a path parameter may be quoted too (`no payout <id>`).
 */
export const scrubMessage = (message: string, max = MAX_STRING): string =>
  cut(scrubSecrets(withoutActual(message)), max)

const ACTUAL = ", actual "

const withoutActual = (message: string): string => {
  let out = ""
  let at = 0
  for (let found = message.indexOf(ACTUAL); found >= 0; found = message.indexOf(ACTUAL, at)) {
    out += `${message.slice(at, found)}${ACTUAL}${REDACTED}`
    at = endOfValue(message, found + ACTUAL.length)
  }
  return out + message.slice(at)
}

/**
 * Where the value a message quotes at `start` ends: a JSON string to its closing quote, an object or array to its
 * closing bracket (brackets inside strings skipped), anything else at the next `; ` (the next field's rule).
 */
const endOfValue = (text: string, start: number): number => {
  let depth = 0
  let inString = false
  for (let index = start; index < text.length; index++) {
    const char = text[index]
    if (inString) {
      if (char === "\\") index++
      else if (char === "\"") {
        inString = false
        if (depth === 0) return index + 1
      }
    } else if (char === "\"") {
      inString = true
    } else if (char === "{" || char === "[") {
      depth++
    } else if (char === "}" || char === "]") {
      depth--
      if (depth <= 0) return index + 1
    } else if (depth === 0 && text.startsWith("; ", index)) {
      return index
    }
  }
  return text.length
}

const showString = (rule: Rule, text: string): string => {
  switch (rule) {
    case "keep":
      return looksSecret(text) ? REDACTED : cut(text)
    case "message":
      return scrubMessage(text)
    case "breBKey":
      return cut(maskBreBKey(text))
    case "email":
      return scrubSecrets(maskEmail(text))
    case "url":
      return scrubSecrets(originOf(text))
  }
}

const showLeaf = (rule: Rule | undefined, value: unknown): unknown => {
  if (value === null || typeof value === "boolean") return value
  if (rule === undefined) return REDACTED
  if (typeof value === "string") return showString(rule, value)
  return rule === "keep" && typeof value === "number" ? value : REDACTED
}

/** The names this module has a rule for: shown as they are. */
const KNOWN_NAMES = new Set([
  ...FIELD_RULES.keys(),
  ...[...RULES_BY_PARENT.values()].flatMap((fields) => [...fields.keys()])
])

/** A field's name as shown: cut, or replaced when it looks like a secret (numbered, so none is lost). */
const shownName = (name: string, index: number) =>
  KNOWN_NAMES.has(name) ? name : looksSecret(name) ? `[redacted field ${index}]` : cut(name)

/**
 * Sets a shown field. A plain object, not a prototype-less one (JSON.stringify takes a slower path for those, about
 * 70% slower on a payout's summary), so the one name an assignment would not set as a field, `__proto__`, is defined.
 */
const setField = (shown: Record<string, unknown>, name: string, value: unknown) => {
  if (name === "__proto__") Object.defineProperty(shown, name, { value, enumerable: true, writable: true })
  else shown[name] = value
}

/** Bounded, secret-free copy of a parsed JSON value. */
export const summarise = (value: unknown): unknown => {
  let values = 0
  const walk = (node: unknown, depth: number, parent: string | undefined, rule: Rule | undefined): unknown => {
    values++
    if (Array.isArray(node)) {
      if (depth >= MAX_DEPTH) return `[${node.length} items]`
      const shown: Array<unknown> = []
      for (const item of node) {
        if (shown.length >= MAX_ITEMS || values >= MAX_VALUES) break
        shown.push(walk(item, depth + 1, parent, rule))
      }
      if (shown.length < node.length) shown.push(`… ${node.length - shown.length} more`)
      return shown
    }
    if (typeof node === "object" && node !== null) {
      const names = Object.keys(node)
      if (depth >= MAX_DEPTH) return `{${names.length} fields}`
      const shown: Record<string, unknown> = {}
      let count = 0
      for (const name of names) {
        if (count >= MAX_FIELDS || values >= MAX_VALUES) break
        const field = (node as Record<string, unknown>)[name]
        setField(shown, shownName(name, count), walk(field, depth + 1, name, ruleOf(parent, name)))
        count++
      }
      if (count < names.length) shown["…"] = `${names.length - count} more fields`
      return shown
    }
    return showLeaf(rule, node)
  }
  return walk(value, 0, undefined, undefined)
}

/** JSON text summarised; a body that is not JSON is described, never kept. */
export const summariseJsonText = (text: string): unknown => {
  if (text === "") return null
  try {
    return summarise(JSON.parse(text))
  } catch {
    return { notJson: `${text.length} characters` }
  }
}

/** The query string's parameters: the contract's kept, any other redacted (a repeated one shows its first value). */
export const summariseQuery = (search: string): Record<string, unknown> => {
  const shown: Record<string, unknown> = {}
  let count = 0
  for (const [name, value] of new URLSearchParams(search)) {
    if (count >= MAX_FIELDS) {
      shown["…"] = "more parameters"
      break
    }
    const key = shownName(name, count)
    if (Object.hasOwn(shown, key)) continue
    const rule = QUERY_RULES.get(name)
    setField(shown, key, rule === undefined ? REDACTED : showString(rule, value))
    count++
  }
  return shown
}

/** The only request headers kept; Authorization, cookies and any other header never. */
const KEPT_HEADERS = ["content-type", "idempotency-key", "user-agent", "x-mock-scenario"] as const

export const summariseHeaders = (headers: Readonly<Record<string, string | undefined>>): Record<string, string> => {
  const shown: Record<string, string> = {}
  for (const name of KEPT_HEADERS) {
    const value = headers[name]
    if (value !== undefined) shown[name] = looksSecret(value) ? REDACTED : cut(value)
  }
  return shown
}

const decodeSegment = (segment: string) => {
  try {
    return decodeURIComponent(segment)
  } catch {
    return segment
  }
}

/** The path, each segment that looks like a secret (percent-encoded or not) replaced, and cut at 256 characters. */
export const scrubPath = (path: string): string =>
  cut(
    path.split("/").map((segment) => looksSecret(decodeSegment(segment)) ? REDACTED : segment).join("/"),
    256
  )
