import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Authentication } from "./Auth.ts"
import {
  BadGatewayError,
  BadRequestError,
  BelowMinimumError,
  ConflictError,
  DestinationMismatchError,
  IdempotencyKeyReusedError,
  MercadoCerradoError,
  NeedsKycError,
  NotFoundError,
  OtpInvalidError,
  RequoteError,
  ServiceUnavailableError,
  TooManyRequestsError,
  TxHashReusedError
} from "./Errors.ts"
import { atLeast, atMost, PrintableText } from "./Primitives.ts"
import { DestinationPreviewResult, PreviewDestinationRequest } from "./Destination.ts"
import {
  KycCustomerRecord,
  KycUserAddressParam,
  OtpSendRequest,
  OtpSendResponse,
  OtpVerifyRequest,
  OtpVerifyResponse
} from "./Kyc.ts"
import { ConfirmPayoutRequest, CreatePayoutRequest, ListPayoutsParams, Payout, PayoutList } from "./Payout.ts"
import { Quote, QuoteParams } from "./Quote.ts"

/** What `X-Mock-Scenario` can ask a mock deployment for (any other value is 400 there; live mode ignores it). */
export const MOCK_SCENARIOS = ["market_closed", "requote", "provider_unavailable"] as const

const MockScenario = Schema.optionalKey(
  Schema.String.check(atMost(64)).annotate({
    description: "Mock mode only (ignored live): `market_closed`, `requote` or `provider_unavailable`"
  })
)

export const MockScenarioHeaders = Schema.Struct({ "x-mock-scenario": MockScenario })

export const CreatePayoutHeaders = Schema.Struct({
  "idempotency-key": Schema.optionalKey(
    Schema.String.check(
      atLeast(1, "must not be empty"),
      atMost(255, "must be at most 255 characters")
    ).annotate({
      description: "Replays the same payout (or swap) when reused by the same integration with the same body"
    })
  ),
  "x-mock-scenario": MockScenario
})

/** The errors every endpoint of an authenticated group can answer besides its own (listed first, as v3 did). */
export const groupErrors = [BadRequestError, TooManyRequestsError] as const

const PayoutIdParam = PrintableText.check(atMost(64)).annotate({
  description: "The payout's id (`po_…`)",
  examples: ["po_3kTMd9Qv7xWc2LpZ8hR1sA"]
}).pipe(Schema.brand("PayoutId"))

export class BrebGroup extends HttpApiGroup.make("breb")
  .add(
    HttpApiEndpoint.get("quote", "/quote", {
      query: QuoteParams,
      headers: MockScenarioHeaders,
      success: Quote,
      error: [
        ...groupErrors,
        MercadoCerradoError,
        BelowMinimumError,
        ConflictError,
        ServiceUnavailableError,
        BadGatewayError
      ]
    })
      .annotate(OpenApi.Summary, "Get a BRE-B quote")
      .annotate(
        OpenApi.Description,
        "The USD→COP rate and, with `destinationCop`, what the user pays for that amount from `fromToken` (`USDC` by default, or `COPm`: the COPm the swap and the fee take, with the `swap` leg), exactly as payout creation would price it now. The `quoteId` is a firm price until its `expiresAt` when given to payout creation, for that `destinationCop` and `fromToken` only (another amount or token is 409 `requote`); a quote without an amount fixes the rate only. 409 `mercado_cerrado` while the USD/COP market is closed, `below_minimum` under 4,000 COP, a plain 409 when no swap route prices COPm."
      ),
    HttpApiEndpoint.post("sendOtp", "/kyc/otp/send", {
      payload: OtpSendRequest,
      success: OtpSendResponse,
      error: [...groupErrors, ServiceUnavailableError]
    })
      .annotate(OpenApi.Summary, "Send OTP for KYC")
      .annotate(
        OpenApi.Description,
        "Starts KYC for a wallet address: e-mails a 6-digit code to the user (mock mode also returns it as `debugCode`). Codes expire after 10 minutes; sending is rate limited per address."
      ),
    HttpApiEndpoint.post("verifyOtp", "/kyc/otp/verify", {
      payload: OtpVerifyRequest,
      headers: MockScenarioHeaders,
      success: OtpVerifyResponse,
      error: [...groupErrors, OtpInvalidError, ServiceUnavailableError, BadGatewayError]
    })
      .annotate(OpenApi.Summary, "Verify OTP for KYC")
      .annotate(
        OpenApi.Description,
        "Checks the code the user received. A wrong or expired code is 400 `otp_invalid`; the right one approves the customer in mock mode, or returns the provider's KYC link in live mode. A customer whose KYC is already approved gets 200 with the customer when no code is waiting to be checked (a verify repeated after the code was used, or once the provider approved them); a wrong code is still 400 `otp_invalid`."
      ),
    HttpApiEndpoint.get("getKycCustomer", "/kyc/customers/:userAddress", {
      params: { userAddress: KycUserAddressParam },
      success: KycCustomerRecord,
      error: [...groupErrors, NotFoundError]
    })
      .annotate(OpenApi.Summary, "Get a customer's KYC status")
      .annotate(
        OpenApi.Description,
        "This integration's customer for a wallet address: `kycStatus` (`not_started` after an OTP was sent and before it was verified, then `pending`, `approved` or `rejected`), `kycUrl`, the e-mail the codes go to (masked, `m***@example.com`), `createdAt` and `updatedAt`. 404 for an address no OTP was sent to by this integration (another integration's customer is 404 too). In live mode a customer still `pending` is checked with the provider (at most once every few seconds; a decision is recorded and sent as `kyc.approved` / `kyc.rejected`, once, as the provider's webhook would); while the provider cannot be reached the stored status is answered."
      ),
    HttpApiEndpoint.post("previewDestination", "/destinations/preview", {
      payload: PreviewDestinationRequest,
      headers: MockScenarioHeaders,
      success: DestinationPreviewResult,
      error: [...groupErrors, NeedsKycError, ServiceUnavailableError, BadGatewayError]
    })
      .annotate(OpenApi.Summary, "Preview a Bre-B destination")
      .annotate(
        OpenApi.Description,
        "Verifies a Bre-B key and holder name with the provider before any money moves: `match`, and when it matches the destination as the bank shows it (`accountOwnerName`, `bankName`, `documentLast4`). Give `previewId` to payout creation before `expiresAt` to reuse the verified destination. The full key is never logged. Each preview spends one of the integration's destination verifications (it reveals whether a key exists and who holds it), a budget shared with payout creation and across replicas: over `PREVIEW_RATE_LIMIT_PER_MINUTE` a minute (by default 30 in live mode, 600 in the sandbox) it is 429 with `Retry-After`; a request refused before the provider answers spends nothing. With `userAddress`, 409 `needs_kyc` unless that user's KYC is approved; live mode needs it."
      ),
    HttpApiEndpoint.post("createPayout", "/payouts", {
      payload: CreatePayoutRequest,
      headers: CreatePayoutHeaders,
      success: Payout.pipe(HttpApiSchema.status(201)),
      error: [
        ...groupErrors,
        IdempotencyKeyReusedError,
        NeedsKycError,
        MercadoCerradoError,
        RequoteError,
        BelowMinimumError,
        DestinationMismatchError,
        ConflictError,
        ServiceUnavailableError,
        BadGatewayError
      ]
    })
      .annotate(OpenApi.Summary, "Create a BRE-B payout")
      .annotate(
        OpenApi.Description,
        "Prepares a payout of `destinationCop` COP to a Bre-B key and returns the transactions the user signs in their own wallet (the deposit and the 1 % service fee). Send an `Idempotency-Key` to make retries safe: the same key and body replay the same payout (`Idempotent-Replayed: true`), a different body with it is 422. A `previewId` from destinations/preview reuses the destination it verified (400 naming `previewId` when it is not this integration's, has expired, or was for another key, name or user). Without a `previewId` the destination is verified with the provider, which spends one of the integration's destination verifications (shared with destinations/preview and across replicas, `PREVIEW_RATE_LIMIT_PER_MINUTE` a minute, by default 30 in live mode and 600 in the sandbox); past them it is 429 with `Retry-After`. A reused `previewId`, a replay and a request refused before the provider answers spend none. Errors in order: `needs_kyc`, `mercado_cerrado`, `requote` (the `quoteId` expired, the rate moved beyond tolerance, or it quoted another `destinationCop` or `fromToken`), `below_minimum`, 429 (destination verifications), `destination_mismatch`."
      ),
    HttpApiEndpoint.get("getPayout", "/payouts/:payoutId", {
      params: { payoutId: PayoutIdParam },
      success: Payout,
      error: [...groupErrors, NotFoundError]
    })
      .annotate(OpenApi.Summary, "Get a payout")
      .annotate(OpenApi.Description, "One payout of this integration (another integration's is 404)."),
    HttpApiEndpoint.post("confirmPayout", "/payouts/:payoutId/confirm", {
      params: { payoutId: PayoutIdParam },
      payload: ConfirmPayoutRequest,
      headers: MockScenarioHeaders,
      success: Payout,
      error: [...groupErrors, NotFoundError, TxHashReusedError, RequoteError, ConflictError, ServiceUnavailableError]
    })
      .annotate(OpenApi.Summary, "Confirm a payout deposit")
      .annotate(
        OpenApi.Description,
        "Reports the hash of the deposit transaction the user sent. The service verifies it onchain (live mode) and moves the payout to `deposit_confirmed`. Confirming again with the same hash returns the payout unchanged; a hash that already confirms another payout or swap is 409 `tx_hash_reused`; after the deposit window it is 409 `requote`. Mock mode has no chain: there the example hash stands for a deposit the mock chain mines for this payout, so it confirms any payout, for every integration, recorded as a `txHash` of its own (derived from the example and the `payoutId`); any other hash is recorded as sent."
      ),
    HttpApiEndpoint.post("cancelPayout", "/payouts/:payoutId/cancel", {
      params: { payoutId: PayoutIdParam },
      headers: MockScenarioHeaders,
      success: Payout,
      error: [...groupErrors, NotFoundError, ConflictError, ServiceUnavailableError, BadGatewayError]
    })
      .annotate(OpenApi.Summary, "Cancel a payout")
      .annotate(
        OpenApi.Description,
        "Closes the deposit window now, for a payout the user abandoned. While it awaits its deposit and none was seen: the provider's transfer is canceled and the payout is `expired` with `expiresAt` now (a timeline hop `expired` from `api`, the event `payout.expired`). Funds that still arrive are not paid out: the provider returns them to the user's wallet and the payout ends `refunded` with `failure.code` `deposit_after_cancel`. Again on an expired payout: 200 with the payout unchanged. After its deposit was seen or confirmed: 409. A confirm after a cancel answers as after an expiry."
      ),
    HttpApiEndpoint.get("listPayouts", "/payouts", {
      query: ListPayoutsParams,
      success: PayoutList,
      error: groupErrors
    })
      .annotate(OpenApi.Summary, "List payouts for this integration")
      .annotate(
        OpenApi.Description,
        "Oldest first (`createdAt`, then `payoutId`), keyset-paginated: pass `nextCursor` as `cursor` for the next page; it is `null` on the last one. Safe to follow: a payout is listed only once no payout still being created can come before it, so paging on with the cursor (polling the last page again) never skips one. Filters combine (all must hold) and keep the order: `createdFrom` and `createdTo` (a range of `createdAt`), `status`, `txHash` (the payout confirmed with that deposit or fee transaction) and `breBKeyLast4` (the last 4 characters of the destination Bre-B key); a payout's id is `GET payouts/{payoutId}`. `status` and `txHash` are matched when each page is read: a payout that gets them after its place was paged past is not listed again (events tell every change). A `nextCursor` returned for a list filtered by `createdTo`, `status`, `txHash` or `breBKeyLast4` continues that list only: pass it with the same filters (`createdFrom` included), else 400 naming `cursor`."
      )
  )
  .middleware(Authentication)
  .prefix("/api/integrations/breb")
  .annotate(OpenApi.Title, "BRE-B")
  .annotate(
    OpenApi.Description,
    "USD→COP payouts to Bre-B keys: quote, KYC by e-mail OTP (and its status, `GET kyc/customers/{userAddress}`), prepare the payout (the user signs the deposit in their own wallet), confirm it with the transaction hash, follow its status."
  )
{}
