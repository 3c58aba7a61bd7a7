/**
 * Every error answer a partner can meet, and what to do next: each `errorCode`, and each status answered without one.
 * The one source of the errors table of `/docs` (the document's description, ERRORS_GUIDE) and of the README's (a
 * test compares it; `npm run openapi` writes it). Each entry has a stable anchor (`#error-needs_kyc`, `#error-429`)
 * that error messages point to (`docsPointer`).
 */
import type { ErrorCode } from "./Errors.ts"

/** The statuses answered without an `errorCode`. */
export type CodelessStatus = 400 | 401 | 403 | 404 | 405 | 408 | 409 | 413 | 415 | 422 | 429 | 431 | 502 | 503

export interface ErrorCatalogueEntry {
  readonly status: number
  /** Undefined: the status's answers without a code. */
  readonly errorCode: ErrorCode | undefined
  /** When it is answered (markdown, one table cell). */
  readonly when: string
  /** What the partner does next (markdown, one table cell). */
  readonly next: string
}

const byCode: { readonly [Code in ErrorCode]: Omit<ErrorCatalogueEntry, "errorCode"> } = {
  below_minimum: {
    status: 409,
    when:
      "`destinationCop` under 4,000 COP, or under 2 USD would reach the provider (quote with an amount, payout creation); a swap's `amountIn` under 1 COPm (its output would round to 0 USDC)",
    next:
      "Ask the user for a larger amount (at least 4,000 COP and 2 USD at the current rate; 1 COPm for a swap). The same request will not pass."
  },
  needs_kyc: {
    status: 409,
    when: "payout creation (or a payee preview naming `userAddress`) for a `userAddress` whose KYC is not approved",
    next:
      "Run KYC for that address: `POST breb/kyc/otp/send`, then `kyc/otp/verify` with the user's code; live, wait for `kyc.approved` (or `GET breb/kyc/customers/{userAddress}` says `approved`). Then send the same request again (the same `Idempotency-Key` works: a 409 is not stored)."
  },
  destination_mismatch: {
    status: 409,
    when:
      "the Bre-B key's holder does not match `accountOwnerName` (mock: the name contains `mismatch`), or the payout's `previewId` answered `match: false`",
    next:
      "Ask the user to check the key and the holder's name as their bank has it, then run a payee preview (`POST breb/destinations/preview`): create the payout with its `previewId` once it answers `match: true`. Each check spends one of the integration's destination verifications."
  },
  requote: {
    status: 409,
    when:
      "the `quoteId` expired, the rate moved beyond tolerance, a COPm quote's COPm no longer buys the deposit on the route, or the quote was asked for another `destinationCop` or `fromToken` (the message names both); a confirm after the deposit window (`expiresAt`) closed",
    next:
      "Quote again (`GET breb/quote`), show the user the new price and create the payout with the new `quoteId` (or none). After a closed deposit window, create a new payout; a deposit that still reaches the provider moves the old one on or comes back to the user."
  },
  tx_hash_reused: {
    status: 409,
    when: "the `txHash` (or `feeTxHash`) already confirms another payout or swap (compared case-insensitively)",
    next:
      "Confirm each payout or swap with the hash of its own transaction. Confirming the same one again with the same hash is not this error: it answers 200."
  },
  otp_invalid: {
    status: 400,
    when:
      "a wrong, malformed (not 6 digits), expired (10 minutes) or burnt (5 wrong attempts) OTP code, or none was sent",
    next:
      "Ask the user for the code again; once it expired or burnt, send a new one (`POST breb/kyc/otp/send`: 30 s between sends, 10 a day)."
  },
  mercado_cerrado: {
    status: 409,
    when:
      "the USD/COP market is closed (quotes and payout creation). Live: outside the configured market hours (default Mon–Fri 08:00–13:00 America/Bogota, closed on CO and US holidays); mock: `X-Mock-Scenario: market_closed`",
    next:
      "Try again when the market opens: `Retry-After` gives the seconds until its next opening when the service knows it, and the message names that moment. Nothing was created; the same `Idempotency-Key` can be used."
  },
  invalid_webhook_signature: {
    status: 401,
    when: "a payout provider callback (`POST webhooks/provider`) with a missing, bad or stale signature",
    next:
      "Only the payout provider calls this route, never a partner. An operator checks `PROVIDER_WEBHOOK_PUBLIC_KEY` against the provider's signing key, and the clocks (10 minutes at most)."
  }
}

const byStatus: { readonly [Status in CodelessStatus]: Omit<ErrorCatalogueEntry, "errorCode" | "status"> } = {
  400: {
    when:
      "invalid input: the message names the field and the rule (unknown body fields too: `quoteID: is not a known field`); a list's `createdTo` not after its `createdFrom`, or a filtered list's `cursor` sent with other filters; malformed JSON; a payout's `previewId` that is not this integration's, has expired, or was previewed for another `breBKey`, `accountOwnerName` or `userAddress` (the message starts `previewId:`); in mock mode an unknown `X-Mock-Scenario`",
    next:
      "Fix the field the message names and send again; the same request will not pass. For `previewId:`, preview again or send the payout without it."
  },
  401: {
    when:
      "a missing, malformed, unknown, revoked or wrong-kind API key (mock deployments take `cop_test_pk_…` keys only, live ones `cop_live_pk_…`)",
    next:
      "Send `Authorization: Bearer <key>` with an active key of this deployment's kind (the message says which part is wrong). Do not retry in a loop: failed lookups from one address are limited (then 429)."
  },
  403: {
    when:
      "a restricted API key asking for an operation outside its scopes (the message names the scope it needs, or that it needs a full key); a key with an IP allowlist used from another address (the message names the address it saw, never the ones allowed); the partner dashboard's session cookie on a change (any method but GET and HEAD) without its `X-CSRF-Token`, or a dashboard session asking for a new sign-in link",
    next:
      "Use a key with the scope the message names (or a full key); scopes are set when the key is issued (`keys issue --scopes`). Send from an address of the key's allowlist, or have the operator add yours (`keys allow-ips`); behind a proxy the address is the one the service's TRUSTED_PROXIES make of `X-Forwarded-For`. A page or script using the dashboard's session sends the session's `csrfToken` (from `GET dashboard/session`) as `X-CSRF-Token`. Sign-in links are made with a full API key, from the partner's back office."
  },
  404: {
    when:
      "an unknown route or resource, including another integration's resource (never 403); in live mode everything under `test-helpers`",
    next:
      "Check the id, and that the resource was created with a key of this integration. A 404 does not turn into a 200 by retrying."
  },
  405: {
    when: "the path exists but not with this method",
    next: "Use one of the methods the `Allow` header lists."
  },
  408: {
    when: "the request did not arrive in time (its headers within 10 s, the whole request within 30 s)",
    next: "Send it again, a POST with the same `Idempotency-Key`; check what slows the client's upload."
  },
  409: {
    when:
      "other conflicts with a resource's state: a payout already confirmed with another hash, a payout or swap that can no longer be confirmed or canceled, a confirmation still being verified, a request with the same `Idempotency-Key` still running (after 10 s), live: a deposit not mined yet or not matching; the test helpers' forward-only moves",
    next:
      "Read the message and the resource (`GET` it). \"Retry\" messages (in progress, not mined yet) pass later with the same request; the others say the action no longer applies to the resource as it is."
  },
  413: {
    when: "a request body over 64 KiB (chunked too)",
    next: "Send a smaller body; no request of this API needs more."
  },
  415: {
    when: "a non-empty body that is not `application/json`",
    next: "Send the body as JSON with `Content-Type: application/json`."
  },
  422: {
    when: "an `Idempotency-Key` this integration already used with a different request body",
    next:
      "A new request needs a new key. To retry the first request, send exactly its body again with the key: the first answer is replayed (`Idempotent-Replayed: true`)."
  },
  429: {
    when:
      "the API key's rate limit (default 100 requests a second, bursts of 200), the integration's destination verifications (payee previews and payouts without a `previewId`), the OTP limits, or too many failed authentications from one address",
    next:
      "Wait the `Retry-After` seconds (the real wait), then send the same request again (a 429 is not stored under an `Idempotency-Key`). Pace yourself before it: every answer to an API key carries the IETF `RateLimit-Policy` (`\"api_key\";q=200;w=2` by default) and `RateLimit` (`\"api_key\";r=<requests left>;t=<seconds until full>`) headers, per replica."
  },
  431: {
    when: "request headers too large",
    next: "Send fewer or smaller headers."
  },
  502: {
    when: "the payout provider or the swap router answered with something the service cannot read (live mode)",
    next:
      "Retry later, a POST with the same `Idempotency-Key` (its key is kept, so the retry reaches the same provider transfer). Quote the `X-Request-Id` to support if it keeps failing."
  },
  503: {
    when:
      "the payout provider, the chain node, the swap router or the OTP e-mail API did not answer (`Retry-After: 5`), the database is unavailable (`Retry-After: 2`), or the service is overloaded, starting or shutting down (`Retry-After: 1`); mock: `X-Mock-Scenario: provider_unavailable`",
    next:
      "Wait the `Retry-After` seconds and send the same request again, a POST with the same `Idempotency-Key` (a payout whose provider call got no answer is taken over by the retry, never made twice)."
  }
}

const CODES = Object.keys(byCode) as ReadonlyArray<ErrorCode>
const STATUSES = Object.keys(byStatus).map(Number) as ReadonlyArray<CodelessStatus>

/** Every documented error answer: the errorCodes first, in the contract's order, then the statuses without a code. */
export const ERROR_CATALOGUE: ReadonlyArray<ErrorCatalogueEntry> = [
  ...CODES.map((errorCode): ErrorCatalogueEntry => ({ ...byCode[errorCode], errorCode })),
  ...STATUSES.map((status): ErrorCatalogueEntry => ({ ...byStatus[status], status, errorCode: undefined }))
]

/** The entry's stable anchor, the same on `/docs` and in the README: `error-needs_kyc`, `error-429`. */
export const errorAnchor = (of: ErrorCode | CodelessStatus): string => `error-${of}`

/** What an error message ends with to point at its entry: `/docs#error-destination_mismatch`. */
export const docsPointer = (of: ErrorCode | CodelessStatus): string => `/docs#${errorAnchor(of)}`

const cell = (text: string) => text.replaceAll("|", "\\|").replaceAll("\n", " ")

/**
 * The catalogue as one markdown table; each row starts with its anchor (an empty `<a id>`, which `/docs` and GitHub
 * both keep).
 */
export const errorTableMarkdown = (): string =>
  [
    "| errorCode | status | when | what to do next |",
    "| --- | --- | --- | --- |",
    ...ERROR_CATALOGUE.map((entry) => {
      const anchor = `<a id="${errorAnchor(entry.errorCode ?? (entry.status as CodelessStatus))}"></a>`
      const code = entry.errorCode === undefined ? "—" : `\`${entry.errorCode}\``
      return `| ${anchor}${code} | ${entry.status} | ${cell(entry.when)} | ${cell(entry.next)} |`
    })
  ].join("\n")

/** For the document's description: every error answer and what to do next. */
export const ERRORS_GUIDE = `

## Errors and what to do next

Every non-2xx body is \`{ error, errorCode? }\`: branch on the HTTP status, then on \`errorCode\`; the \`error\` text is for people (it names the field and the rule, and may end with a link to its row here). None of these answers is stored under an \`Idempotency-Key\` (only a created resource is): once the cause is fixed, send the request again with the same key and body.

${errorTableMarkdown()}
`
