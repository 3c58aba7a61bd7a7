/**
 * Every rule the kit checks, by a stable id (`R-<TOPIC>-<n>`), with its statement and where the API reference states
 * it: a section of the Integrations API's README (`README#errors`) or an operation of the deployment's `/docs` page
 * (`/docs#tag/bre-b/POST/api/integrations/breb/payouts`). Scenarios cite rules by id, so a typo is a type error;
 * testkit/RULES.md lists them with the scenarios that check each (`npm run rules` writes it, a test keeps it current).
 * Ids are never reused: a rule that goes away leaves a gap.
 */
import type { EndpointName } from "./contract.ts"
import { docsFragment } from "./docsAddress.ts"

/** Sections of the Integrations API's README, by their GitHub anchor (testkit/test/rules.test.ts checks each exists). */
export type ReadmeSection =
  | "walkthrough-curl"
  | "following-a-list"
  | "endpoints"
  | "test-helpers-sandbox"
  | "errors"
  | "payout-lifecycle-and-provider-events"
  | "the-payouts-timeline"
  | "when-a-payout-does-not-go-through"
  | "events-to-partners-webhooks"
  | "dashboard"
  | "request-logs"
  | "audit-log"
  | "reports"
  | "batch-payouts"
  | "operating-it"
  | "live-mode"
  | "money"
  | "versioning"

/**
 * Where a rule may say it is stated: a README section, or an operation of the contract by its endpoint name (shown on
 * `/docs` at the address docsAddress.ts reads from the contract's document).
 */
type Citable = `README#${ReadmeSection}` | EndpointName

interface CitingRule {
  readonly statement: string
  readonly see: readonly [Citable, ...Array<Citable>]
}

export const RULES = {
  "R-AUTH-1": {
    statement:
      "every partner endpoint needs `Authorization: Bearer <API key>`: without one, with another scheme or with a malformed key it is 401 ErrorBody, before any validation of the request",
    see: ["README#endpoints", "README#errors"]
  },
  "R-AUTH-2": {
    statement: "a well-formed key the deployment never issued (or revoked) is 401",
    see: ["README#endpoints", "README#errors"]
  },
  "R-AUTH-3": {
    statement:
      "a mock deployment accepts only test keys (`cop_test_pk_…`), a live one only live keys (`cop_live_pk_…`); a key of the other kind is 401",
    see: ["README#endpoints"]
  },
  "R-AUTH-4": {
    statement: "`GET /healthz`, `/readyz`, `/openapi.json` and `/docs` answer without a key",
    see: ["README#endpoints"]
  },
  "R-TENANT-1": {
    statement:
      "a payout, swap, KYC customer, webhook endpoint or event belongs to the integration that made it: one that does not exist or is another integration's is 404 ErrorBody, never 403, and is left unchanged",
    see: ["README#endpoints", "getPayout"]
  },
  "R-TENANT-2": {
    statement: "a list holds only the caller's resources, under the caller's `integrationId`",
    see: ["README#endpoints", "listPayouts"]
  },
  "R-HEALTH-1": {
    statement: "`GET /healthz` answers the status, the mode and the API version, without a key",
    see: ["README#operating-it", "healthz"]
  },
  "R-HEALTH-2": {
    statement: "`GET /readyz` answers 200 while the database answers (503 otherwise)",
    see: ["README#operating-it", "readyz"]
  },
  "R-DASH-1": {
    statement:
      "`POST dashboard/sessions` with an API key answers 201 `{ url, expiresAt }`: a one-time sign-in link to the deployment's `/dashboard/sign-in?token=…`, valid until `expiresAt` (five minutes); the dashboard's session endpoints answer 404 to a key, which has no session",
    see: ["README#dashboard", "createDashboardSignInLink", "getDashboardSession"]
  },
  "R-CONTRACT-1": {
    statement:
      "`GET /openapi.json` is the contract's OpenAPI document: its `info.version` is the API version and it lists every operation",
    see: ["README#walkthrough-curl", "README#versioning"]
  },
  "R-CONTRACT-2": {
    statement:
      "every answer keeps the contract: a status the operation declares, JSON, the operation's schema (a field the contract does not know is an addition, see README#versioning), and for errors exactly ErrorBody with an errorCode the operation declares at that status; timestamps are ISO 8601 UTC with milliseconds",
    see: ["README#errors", "README#versioning"]
  },
  "R-SEQ-1": {
    statement:
      "in any sequence of payout operations (create, with or without a payee preview, get, confirm, confirm again, another payout's hash, advance, cancel, list), several payouts interleaved: a first confirm answers `deposit_confirmed` or later and a confirmed payout takes no other hash (409), a cancel expires a payout awaiting its deposit and is 409 once a deposit was confirmed, an advance (mock) answers the status it was asked for or 409, its status only moves forward (`awaiting_deposit` → `deposit_confirmed` → `processing` → `completed`, `failed` → `refunded`; `expired` only to `deposit_confirmed`, `failed` or `refunded`), a hash confirms one payout (another's is 409 `tx_hash_reused`), its amounts never change, its events are numbered 1, 2, 3 … with its current status among them, and a list shows it once",
    see: ["README#payout-lifecycle-and-provider-events", "README#following-a-list", "confirmPayout", "advancePayout"]
  },
  "R-CANCEL-1": {
    statement:
      "`POST payouts/{payoutId}/cancel` on a payout awaiting its deposit answers it `expired` with `expiresAt` now and a last timeline hop `expired` from `api`; again, the same payout; a confirm after it is 409 `requote`",
    see: ["README#when-a-payout-does-not-go-through", "cancelPayout"]
  },
  "R-CANCEL-2": {
    statement:
      "a payout whose deposit was seen or confirmed cannot be canceled: 409 without errorCode, nothing changes",
    see: ["README#when-a-payout-does-not-go-through", "cancelPayout"]
  },
  "R-CANCEL-3": {
    statement:
      "funds returned after a cancel are never paid out: the payout goes from `expired` to `refunded` (no `deposit_confirmed`), `failure.code` `deposit_after_cancel`, and a USDC `refund` to `userAddress`",
    see: ["README#when-a-payout-does-not-go-through"]
  },
  "R-FAILURE-1": {
    statement:
      "a `failed` or `refunded` payout carries `failure { code, category, retryable, message, at }`: a documented code (an open set), its category, retryable and message as the contract's table says",
    see: ["README#when-a-payout-does-not-go-through"]
  },
  "R-FAILURE-2": {
    statement:
      "the served OpenAPI document lists every failure code the contract documents, and the closed set of categories",
    see: ["README#when-a-payout-does-not-go-through", "README#versioning"]
  },
  "R-ERR-1": {
    statement:
      "every non-2xx body is ErrorBody `{ error, errorCode? }`, never a stack trace: an unknown route is 404, a method a path does not serve 405 (or 404)",
    see: ["README#errors"]
  },
  "R-ERR-2": {
    statement:
      "invalid input is 400 ErrorBody whose `error` names the field and the rule (a body that is not JSON or not an object, a missing, malformed or unknown field), never a 5xx",
    see: ["README#errors"]
  },
  "R-ERR-3": {
    statement:
      "a body over 64 KiB (chunked too) is 413, a POST body that is not `application/json` is 415, both ErrorBody",
    see: ["README#errors"]
  },
  "R-MOCK-1": {
    statement:
      "in mock mode the `X-Mock-Scenario` header `market_closed`, `requote` or `provider_unavailable` forces 409 `mercado_cerrado`, 409 `requote` or 503 ErrorBody without errorCode wherever the outcome can happen",
    see: ["README#errors"]
  },
  "R-QUOTE-1": {
    statement:
      "a quote's `cached` is false when the call fetched the rate and true when it came from the cache; a first call is false",
    see: ["quote"]
  },
  "R-QUOTE-2": {
    statement:
      "`fromToken` is `USDC` (the default) or `COPm`; any other token is 400 naming fromToken; a quote prices every fromToken exactly as a payout created now from it",
    see: ["README#endpoints", "quote"]
  },
  "R-QUOTE-3": {
    statement:
      "a quote asked with `destinationCop` binds that amount and its `fromToken`: a payout with its `quoteId` and another amount or token is 409 `requote` naming both; a quote without an amount fixes only the rate",
    see: ["README#endpoints", "README#errors", "createPayout"]
  },
  "R-MONEY-1": {
    statement:
      "amounts follow from D = destinationCop, the sell rate S and the token's decimals: X = D / (0.995 S) rounded up, F = 1 % of X rounded up, T = X + F, E = D / T rounded down to 6 decimals, display `1 USD = <E rounded down to 2> COP`; a quote without an amount shows E = S × 0.995 / 1.01",
    see: ["README#money", "quote"]
  },
  "R-MONEY-2": {
    statement:
      "`destinationCop` below 4000 COP, or an amount that would send the payout provider less than 2 USD, is 409 `below_minimum`",
    see: ["README#errors", "README#money"]
  },
  "R-MONEY-3": {
    statement:
      "`destinationCop` is a plain positive decimal with at most 2 decimals, not above the Bre-B per-transfer cap; otherwise 400 naming destinationCop",
    see: ["README#errors", "createPayout"]
  },
  "R-OTP-1": {
    statement:
      "sending an OTP answers the `userAddress` and `expiresAt` 10 minutes ahead; a mock deployment returns the code as `debugCode`, a live one never",
    see: ["README#endpoints", "sendOtp"]
  },
  "R-OTP-2": {
    statement: "in mock mode verifying a valid code approves the user's KYC",
    see: ["README#endpoints", "verifyOtp"]
  },
  "R-OTP-3": {
    statement:
      "a wrong code, one that is not 6 digits, or a verify with no OTP sent is 400 `otp_invalid`; a wrong attempt leaves the right code usable",
    see: ["README#errors", "verifyOtp"]
  },
  "R-OTP-4": {
    statement: "5 wrong attempts burn a code: after them even the right one is `otp_invalid`",
    see: ["README#endpoints", "verifyOtp"]
  },
  "R-OTP-5": {
    statement:
      "a second send to the same address by the same integration within 30 s is 429 ErrorBody with `Retry-After`",
    see: ["README#endpoints", "README#errors", "sendOtp"]
  },
  "R-KYC-1": {
    statement:
      "`GET kyc/customers/{userAddress}` answers the integration's customer: the `userAddress` as sent, `kycStatus` (`not_started` after a send, `approved` after a mock verify), the e-mail masked as its first character, `***`, `@` and the domain, and `createdAt` / `updatedAt` as ISO 8601 UTC",
    see: ["README#endpoints", "getKycCustomer"]
  },
  "R-KYC-2": {
    statement: "`GET kyc/customers/{userAddress}` for an address no OTP was sent to is 404 ErrorBody",
    see: ["README#endpoints", "getKycCustomer"]
  },
  "R-KYC-3": {
    statement:
      "a verify repeated for an approved customer, with no code waiting to be checked, answers 200 with the approved customer, not `otp_invalid`",
    see: ["README#endpoints", "verifyOtp"]
  },
  "R-PAYOUT-1": {
    statement:
      "creating a payout answers 201 with a prepared Payout `awaiting_deposit` (deposit address and amount, `transaction`, `feeTransaction`, receipt); `GET payouts/{payoutId}` answers it as created",
    see: ["README#endpoints", "createPayout", "getPayout"]
  },
  "R-PAYOUT-2": {
    statement:
      "a payout's fees are the `bridge_fx`, `bridge` and `copby` legs (and `swap` when funded from COPm), quoted, and itemized identically in `receipt.feesItemized`",
    see: ["README#money", "createPayout"]
  },
  "R-PAYOUT-3": {
    statement:
      "the receipt masks the Bre-B key to its last 4 characters and states its currencies, `included_in_rate` and the totals",
    see: ["createPayout"]
  },
  "R-PAYOUT-4": {
    statement:
      "`transaction` is an ERC-20 transfer of the deposit X to the deposit address; `feeTransaction` one of the service fee F to the fee wallet",
    see: ["README#walkthrough-curl", "createPayout"]
  },
  "R-PAYOUT-5": {
    statement: "a payout for a `userAddress` whose KYC this integration has not approved is 409 `needs_kyc`",
    see: ["README#errors", "createPayout"]
  },
  "R-PAYOUT-6": {
    statement:
      "a Bre-B key whose holder does not match `accountOwnerName` is 409 `destination_mismatch` (mock: the name contains `mismatch` in any letter case)",
    see: ["README#errors", "createPayout"]
  },
  "R-PREVIEW-1": {
    statement:
      "a payee preview answers `match` for a Bre-B key and holder name (mock: false when the name contains `mismatch`), with the destination as the bank shows it (`accountOwnerName`, `bankName`, `documentLast4`) when it matches and `null` when it does not, and a `previewId` valid until `expiresAt`",
    see: ["README#endpoints", "previewDestination"]
  },
  "R-PREVIEW-2": {
    statement:
      "a payout given a `previewId` with the previewed `breBKey` and `accountOwnerName` reuses the previewed destination (its `destinationPreview` is the preview's); a preview whose `match` was false is 409 `destination_mismatch`",
    see: ["README#endpoints", "README#errors", "createPayout"]
  },
  "R-PREVIEW-3": {
    statement:
      "a `previewId` is the integration's own and bound to what was previewed: another integration's, an unknown one, or one given with another `breBKey` or `accountOwnerName` is 400 ErrorBody naming `previewId`, and no payout is made",
    see: ["README#errors", "createPayout"]
  },
  "R-PAYOUT-7": {
    statement:
      "payout creation checks in this order: 400 (input), `needs_kyc`, `mercado_cerrado`, `requote`, `below_minimum`, `destination_mismatch`",
    see: ["README#errors", "createPayout"]
  },
  "R-PAYOUT-8": {
    statement:
      "`userAddress`, `destinationCop`, `breBKey` and `accountOwnerName` are required; `userAddress` is EIP-55 checksummed and `breBKey` one of the Bre-B key forms; otherwise 400 naming the field",
    see: ["README#errors", "createPayout"]
  },
  "R-PAYOUT-9": {
    statement:
      "a payout carries `timeline`: each hop `{status, at, source}` ordered by `at`; in mock mode a payout confirmed and left to complete shows `created` (api), `deposit_mined` (mock_chain), `deposit_confirmed` (api), `funds_received`, `processing`, `completed` (mock_provider), in that order, `created` at `createdAt` and `completed` at `receipt.completedAt`",
    see: ["README#the-payouts-timeline", "getPayout"]
  },
  "R-PAYOUT-10": {
    statement:
      "a prepared payout's `calls`, when it is not null, is an atomic EIP-5792 `wallet_sendCalls` batch (`version` 2.0.0, `atomicRequired`, a hex `chainId`, `from` = `userAddress`) of exactly `transaction` then `feeTransaction`, moving no native value",
    see: ["README#live-mode", "createPayout"]
  },
  "R-CONFIRM-1": {
    statement:
      "confirming with a `txHash` answers 200 with the payout `deposit_confirmed` (or later) and the hash recorded; provider legs stay pending until the provider settles, `copby` until its fee transfer is verified",
    see: ["README#endpoints", "confirmPayout"]
  },
  "R-CONFIRM-2": {
    statement: "confirming again with the same `txHash`, in any letter case, answers the payout unchanged",
    see: ["README#endpoints", "confirmPayout"]
  },
  "R-CONFIRM-3": {
    statement: "a payout is confirmed once: another `txHash` for a confirmed payout is 409 and the first hash stays",
    see: ["README#errors", "confirmPayout"]
  },
  "R-CONFIRM-4": {
    statement: "`txHash` is required and matches `^0x[a-fA-F0-9]{64}$`; otherwise 400 naming txHash",
    see: ["confirmPayout"]
  },
  "R-CONFIRM-5": {
    statement: "a `feeTxHash` is recorded; in mock mode it verifies the `copby` leg at confirmation",
    see: ["confirmPayout"]
  },
  "R-CONFIRM-6": {
    statement:
      "a confirmation after the deposit window is 409 `requote`; a rejected confirmation leaves the payout as it was and does not claim its hash",
    see: ["README#errors", "confirmPayout"]
  },
  "R-TXHASH-1": {
    statement:
      "a `txHash` confirms one payout or swap only, across every integration and in any letter case: using it again is 409 `tx_hash_reused` (in mock mode the API reference's example hashes stand for a transaction mined for each payout or swap they confirm, recorded under a `txHash` of its own)",
    see: ["README#errors", "confirmPayout", "confirmSwap"]
  },
  "R-LIFECYCLE-1": {
    statement:
      "a payout moves `awaiting_deposit` → `deposit_confirmed` → `processing` → `completed` (side exits `expired`, `failed`, `refunded`), only ever forward; in mock mode a confirmed payout completes on its own and its legs verify",
    see: ["README#payout-lifecycle-and-provider-events"]
  },
  "R-LIST-1": {
    statement:
      "a list answers `{ integrationId, items, nextCursor }`, items ordered by `createdAt`, then id; paging with `nextCursor` returns every item once, and `nextCursor` is null on the last page",
    see: ["README#endpoints", "listPayouts", "listSwaps"]
  },
  "R-LIST-2": {
    statement:
      "`createdFrom` is an inclusive ISO 8601 timestamp (any offset, exact to the millisecond), `limit` 1 to 500 (default 50), `cursor` one the API returned; anything else is 400 naming the parameter",
    see: ["README#errors", "listPayouts"]
  },
  "R-LIST-3": {
    statement:
      "`GET payouts` filters by `status`, `createdTo` (exclusive), `txHash` (the payout's `txHash` or `feeTxHash`, any letter case) and `breBKeyLast4` (any letter case); `GET swaps` by `status` and `createdTo`; filters combine (all must hold) with `createdFrom` and with cursor pages, in the list's order",
    see: ["README#endpoints", "listPayouts", "listSwaps"]
  },
  "R-LIST-4": {
    statement:
      "a `nextCursor` returned for a filtered list (payouts or swaps by `createdTo`, `status`, `txHash`, `breBKeyLast4`; events by `resourceId`) continues that list only: with other filters it is 400 naming `cursor`; a filter value that is not valid (or `createdTo` not after `createdFrom`) is 400 naming the parameter",
    see: ["README#errors", "listPayouts", "listEvents"]
  },
  "R-IDEM-1": {
    statement:
      "the same `Idempotency-Key` with the same request (path and JSON body, in any field order) replays the stored 201 and its resource, with `Idempotent-Replayed: true`",
    see: ["README#errors", "createPayout"]
  },
  "R-IDEM-2": {
    statement: "the same `Idempotency-Key` with another body is 422, before any other check, and changes nothing",
    see: ["README#errors", "createPayout"]
  },
  "R-IDEM-3": {
    statement: "one `Idempotency-Key` creates exactly one resource, however many retries run at once",
    see: ["README#errors"]
  },
  "R-IDEM-4": {
    statement: "`Idempotency-Key`s are scoped per integration: another integration's same key is a new request",
    see: ["README#errors"]
  },
  "R-IDEM-5": {
    statement: "a request rejected by validation or a transient error does not use up its `Idempotency-Key`",
    see: ["README#errors"]
  },
  "R-IDEM-6": {
    statement: "an `Idempotency-Key` has at most 255 characters; a longer one is 400",
    see: ["README#errors", "createPayout"]
  },
  "R-SWAP-1": {
    statement:
      "preparing a swap answers 201 with a SwapIntent `prepared` (the pair, `amountIn`, a quoted `swap` leg, `approvalTarget`, `expiresAt`) that moves only to `confirmed`, `failed` or `expired`; GET answers it as prepared",
    see: ["README#endpoints", "prepareSwap", "getSwap"]
  },
  "R-SWAP-2": {
    statement: "`minAmountOut` = `expectedAmountOut` × (10000 − `slippageBps`) / 10000, rounded down in base units",
    see: ["README#money", "prepareSwap"]
  },
  "R-SWAP-3": {
    statement:
      "one side of a swap is COPm, `amountIn` is positive with at most the token's decimals, `slippageBps` is 1 to 500; otherwise 400 naming the field",
    see: ["README#money", "prepareSwap"]
  },
  "R-SWAP-4": {
    statement:
      "confirming a swap answers 200 `confirmed` with the `txHash` (lower case) and the swap leg verified; the same hash again answers it unchanged, another is 409; after `expiresAt` it is 409 `requote`",
    see: ["README#endpoints", "confirmSwap"]
  },
  "R-SWAP-5": {
    statement: "a COPm `amountIn` below 1 COPm is 409 `below_minimum` naming amountIn and the minimum",
    see: ["README#errors", "prepareSwap"]
  },
  "R-SWAP-6": {
    statement:
      "a payout funded from COPm has the same USDC deposit X as one from USDC, a `swap` leg, the router swap as `transaction` (with `approvalTarget`) and `receipt.totalPaid` = X + F + the swap leg",
    see: ["README#money", "createPayout"]
  },
  "R-PROVIDER-1": {
    statement:
      "a payout provider callback needs a valid `X-Webhook-Signature` (`t=<ms>,v0=<base64 RSA-SHA256 over <t>.<raw body>>`, at most 10 minutes old), not a partner API key; otherwise 401 `invalid_webhook_signature`",
    see: ["README#live-mode", "provider"]
  },
  "R-EVT-1": {
    statement:
      "a webhook endpoint is created 201 with its signing `secret` (`whsec_…`), shown only then and on rotation; `events` defaults to `[\"*\"]`; a bad `url` or `events` is 400 naming it; delete is 204, then 404",
    see: ["README#events-to-partners-webhooks", "createWebhookEndpoint"]
  },
  "R-EVT-2": {
    statement:
      "deliveries are signed per Standard Webhooks (`webhook-id` = the event id, `webhook-timestamp`, `webhook-signature`) and their body is the event `{ id, type, createdAt, data: { object } }`",
    see: ["README#events-to-partners-webhooks", "pingWebhookEndpoint"]
  },
  "R-EVT-3": {
    statement:
      "rotating an endpoint's secret answers a new one; for 24 h deliveries carry two signatures, the old and the new secret's",
    see: ["README#events-to-partners-webhooks", "rotateWebhookSecret"]
  },
  "R-EVT-4": {
    statement: "events are delivered at least once, in order per resource",
    see: ["README#events-to-partners-webhooks"]
  },
  "R-EVT-5": {
    statement:
      "the test helpers (mock only; 404 in live mode) move a payout only forward (409 otherwise) and reject a KYC, through the provider's state machine and event path",
    see: ["README#events-to-partners-webhooks", "advancePayout", "rejectKyc"]
  },
  "R-EVT-6": {
    statement:
      "redelivering an event answers 202 naming the endpoint, and the same bytes arrive under the same `webhook-id`",
    see: ["README#events-to-partners-webhooks", "redeliverEvent"]
  },
  "R-EVT-7": {
    statement:
      "`GET events/{eventId}` answers the event with its delivery attempts; `GET events` lists events in the order they were recorded (each resource's in `sequence` order) and filters by `type`",
    see: ["README#events-to-partners-webhooks", "listEvents", "getEvent"]
  },
  "R-EVT-8": {
    statement:
      "every event carries `sequence`: 1 for a resource's first event, one more with each later event of that resource (no gap, no repeat), the same in deliveries and in `GET events`; a receiver drops an event whose `sequence` is not above the last it applied for that resource",
    see: ["README#events-to-partners-webhooks", "listEvents"]
  },
  "R-LOGS-1": {
    statement:
      "every authenticated request is recorded for its integration: `GET request-logs/{requestId}` answers it by its `X-Request-Id` (method, path, status) within seconds of its answer, and the list filters by `requestId` and `statusClass`; another integration's request is 404 there and never in its list",
    see: ["README#request-logs", "getRequestLog", "listRequestLogs"]
  },
  "R-AUDIT-1": {
    statement:
      "every security-relevant change (keys issued, rotated, revoked, allowlisted; webhook endpoints created, updated, deleted, their secrets rotated, disabled; dashboard sign-in) is in `GET audit-log`, newest first, with its actor, time, client address and `X-Request-Id`, and never a secret; another integration's changes are never in it",
    see: ["README#audit-log", "listAuditLog"]
  },
  "R-BATCH-1": {
    statement:
      "`POST breb/payout-batches` makes each valid item a payout (as `GET payouts/{payoutId}` answers it) and gives each invalid item an ErrorBody naming the item's field and the rule, making nothing for it; `totals` are the exact sums of the payouts' amounts; `calls` holds every deposit transfer and one transfer of the summed service fee, together exactly `totals.sourceAmount`",
    see: ["README#batch-payouts", "createPayoutBatch"]
  },
  "R-BATCH-2": {
    statement:
      "a batch is refused as a whole, making nothing, when the user's KYC is not approved (409 `needs_kyc`), when no item is valid (400 naming `items`) and from COPm (400 naming `fromToken`); another integration's batch is 404",
    see: ["README#batch-payouts", "createPayoutBatch", "getPayoutBatch"]
  },
  "R-BATCH-3": {
    statement:
      "`POST breb/payout-batches/{batchId}/confirm { txHash }` confirms every payout of the batch its transaction pays (mock: all of them), each with that `txHash`, and the batch carries it; the same hash again answers the same batch with the same payouts and hash (each as it is now), another hash is 409; the batch's first event is `payout_batch.confirmed` (sequence 1) and `GET payout-batches` lists the batch, confirmed or moved on since",
    see: ["README#batch-payouts", "confirmPayoutBatch", "listPayoutBatches"]
  },
  "R-BATCH-4": {
    statement:
      "in any mode, without moving money: `POST breb/payout-batches` with no items is a 400 naming `items`; an unknown `batchId` is 404 to `GET payout-batches/{batchId}` and to its confirm; `GET payout-batches` answers a PayoutBatchList of at most `limit` batches",
    see: ["README#batch-payouts", "createPayoutBatch", "getPayoutBatch", "confirmPayoutBatch", "listPayoutBatches"]
  },
  "R-REPORT-1": {
    statement:
      "`GET reports/payouts?from&to` answers every payout the integration created in the range, oldest first: as CSV (`format=csv`, the default: a header row of the contract's columns in their order, RFC 4180) or JSON Lines (`format=jsonl`), each row with the amounts the API answers for that payout, exactly; a cell a spreadsheet would run as a formula starts with `'`; another integration's payouts are never in it; `to` not after `from` is a 400 naming `to`",
    see: ["README#reports", "payoutReport"]
  },
  "R-REPORT-2": {
    statement:
      "`GET reports/statement?date=` answers the UTC day's payouts and swaps counted and summed per status and token; each line equals the sums of the same range's report rows with that status and token, exactly; `final` is true once the day has ended; a date that is not a calendar date is a 400 naming `date`",
    see: ["README#reports", "statement"]
  },
  "R-EVT-9": {
    statement:
      "`GET events?resourceId=` lists the events of one payout, swap, KYC customer (its address in any letter case) or endpoint, in `sequence` order, combined with `type` and cursor pages; another integration's resource lists nothing",
    see: ["README#events-to-partners-webhooks", "listEvents"]
  },
  "R-EVT-10": {
    statement:
      "each delivery attempt carries `responseExcerpt`: the start of the receiver's response body as text, at most 256 characters, control characters removed (line breaks read as spaces); null when no body came",
    see: ["README#events-to-partners-webhooks", "getEvent"]
  },
  "R-EVT-12": {
    statement:
      "an endpoint created (or updated) with `signatureScheme: v1a` receives deliveries whose `webhook-signature` holds `v1a,<base64>`: an ed25519 signature of `<webhook-id>.<webhook-timestamp>.<raw body>` that verifies with the public key `GET webhook-signing-key` answers without an API key; a changed byte does not verify",
    see: ["README#events-to-partners-webhooks", "getWebhookSigningKey", "createWebhookEndpoint"]
  },
  "R-EVT-13": {
    statement:
      "`POST webhook-endpoints/{endpointId}/replay { from, to, types? }` answers 202 with the replay (`events`: the range's events the endpoint subscribes to) and sends each of them again to that endpoint, once, in the order they were recorded, signed, under the event's `webhook-id`; `GET …/replays/{replayId}` shows `delivered`, `failed`, `pending` and `completed` once none is pending",
    see: ["README#events-to-partners-webhooks", "replayWebhookEvents", "getWebhookReplay"]
  },
  "R-EVT-11": {
    statement:
      "`PATCH webhook-endpoints/{endpointId}` sets `status`, `url`, `events`: a disabled endpoint shows a `disabledReason` and is refused a ping (409); enabled again its `disabledReason` is null and it receives new events; `url` and `events` are checked as at creation (400 naming the field); another integration's endpoint is 404",
    see: ["README#events-to-partners-webhooks", "updateWebhookEndpoint"]
  },
  "R-KEYS-1": {
    statement:
      "`GET api-keys` lists the calling integration's API keys (`keyId`, `kind`, `last4`, `createdAt`, `lastUsedAt`, `expiresAt`, `revokedAt`, `status`), `current: true` on exactly the key making the request, never a key itself; another integration's keys are never listed",
    see: ["README#endpoints", "listApiKeys"]
  },
  "R-SANDBOX-1": {
    statement:
      "in mock mode `advance` to `failed` or `refunded` takes a known `failureCode` and the payout's `failure` is that code's row of the documented table (`refunded` also carries the mock's `refund`); an unknown code or `to` is one 400 naming the allowed values",
    see: ["README#test-helpers-sandbox", "advancePayout"]
  },
  "R-SANDBOX-2": {
    statement:
      "in mock mode the time helpers produce `payout.expired`, `payout.delayed` and `swap.expired` on request, through the sweeps: the resource answers in its new state and the event is in `GET events`",
    see: ["README#test-helpers-sandbox", "expirePayout", "delayPayout", "expireSwap"]
  },
  "R-SANDBOX-3": {
    statement:
      "in mock mode `POST test-helpers/events/trigger { type }` produces one event of every type of the webhooks section in the caller's integration and answers its id, which `GET events/{eventId}` reads with that type",
    see: ["README#test-helpers-sandbox", "triggerEvent", "getEvent"]
  },
  "R-RECEIVER-1": {
    statement:
      "a partner's receiver answers 2xx, within 10 seconds, to every validly signed delivery of every event type the contract declares",
    see: ["README#events-to-partners-webhooks"]
  },
  "R-RECEIVER-2": {
    statement:
      "a receiver refuses (non-2xx) a delivery whose `webhook-signature` does not verify with its secret over the raw body: signed by another secret, by a secret retired after a rotation's overlap, or a body changed after signing",
    see: ["README#events-to-partners-webhooks"]
  },
  "R-RECEIVER-3": {
    statement:
      "a receiver refuses a delivery whose `webhook-timestamp` is more than 5 minutes from its clock, in either direction",
    see: ["README#events-to-partners-webhooks"]
  },
  "R-RECEIVER-4": {
    statement: "a receiver refuses a delivery without `webhook-id`, `webhook-timestamp` or `webhook-signature`",
    see: ["README#events-to-partners-webhooks"]
  },
  "R-RECEIVER-5": {
    statement:
      "a receiver accepts a delivery when any one of the space-separated signatures of `webhook-signature` verifies (a rotation's overlap)",
    see: ["README#events-to-partners-webhooks"]
  },
  "R-RECEIVER-6": {
    statement:
      "a receiver answers 2xx to a duplicate `webhook-id` and applies the event once (deliveries are at least once)",
    see: ["README#events-to-partners-webhooks"]
  },
  "R-RECEIVER-7": {
    statement:
      "a receiver answers 2xx to an event older than the state it has and does not move the resource back (a payout only moves forward)",
    see: ["README#events-to-partners-webhooks"]
  }
} as const satisfies Record<string, CitingRule>

/**
 * Where a rule is stated: a README section (`README#errors`), or an operation of the contract by its endpoint name
 * (`getPayout`, shown on `/docs`). The ones the rules cite: the contract's names stay out of the published declarations,
 * which reach no module of effect's.
 */
export type Reference = (typeof RULES)[keyof typeof RULES]["see"][number]

export interface Rule {
  readonly statement: string
  readonly see: readonly [Reference, ...Array<Reference>]
}

export type RuleId = keyof typeof RULES

export const ruleIds: ReadonlyArray<RuleId> = Object.keys(RULES) as Array<RuleId>

/** The README the references point into: the Integrations API's, as its repository shows it. */
export const README_URL = "https://github.com/cop-integrations/integrations-api/blob/main/README.md"

/** `README#errors`, or the `/docs` page's address of an operation. */
export const referenceText = (reference: Reference): string =>
  reference.startsWith("README#") ? reference : `/docs#${docsFragment(reference as EndpointName)}`

/** One line per rule, as failures show it: `R-TXHASH-1: <statement> (README#errors, /docs#…)`. */
export const describeRule = (id: RuleId): string => {
  const rule: Rule = RULES[id]
  return `${id}: ${rule.statement} (${rule.see.map(referenceText).join(", ")})`
}

/** What a scenario's `rule` says: each rule it checks, one a line. */
export const describeRules = (ids: ReadonlyArray<RuleId>): string => ids.map(describeRule).join("\n")
