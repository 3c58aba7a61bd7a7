import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
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
import { PrintableText } from "./Primitives.ts"
import { OtpSendRequest, OtpSendResponse, OtpVerifyRequest, OtpVerifyResponse } from "./Kyc.ts"
import { ConfirmPayoutRequest, CreatePayoutRequest, ListPayoutsParams, Payout, PayoutList } from "./Payout.ts"
import { Quote, QuoteParams } from "./Quote.ts"

const MockScenario = Schema.optionalWith(
  Schema.String.pipe(Schema.maxLength(64)).annotations({
    description: "Mock mode only (ignored live): `market_closed`, `requote` or `provider_unavailable`"
  }),
  { exact: true }
)

export const MockScenarioHeaders = Schema.Struct({ "x-mock-scenario": MockScenario })

export const CreatePayoutHeaders = Schema.Struct({
  "idempotency-key": Schema.optionalWith(
    Schema.String.pipe(
      Schema.minLength(1, { message: () => "must not be empty" }),
      Schema.maxLength(255, { message: () => "must be at most 255 characters" })
    ).annotations({ description: "Replays the same payout (or swap) when reused by the same integration with the same body" }),
    { exact: true }
  ),
  "x-mock-scenario": MockScenario
})

const payoutId = HttpApiSchema.param("payoutId", PrintableText.pipe(Schema.maxLength(64)))

export class BrebGroup extends HttpApiGroup.make("breb")
  .add(
    HttpApiEndpoint.get("quote", "/quote")
      .setUrlParams(QuoteParams)
      .setHeaders(MockScenarioHeaders)
      .addSuccess(Quote)
      .addError(MercadoCerradoError)
      .addError(BelowMinimumError)
      .addError(ServiceUnavailableError)
      .addError(BadGatewayError)
      .annotate(OpenApi.Summary, "Get a BRE-B quote")
  )
  .add(
    HttpApiEndpoint.post("sendOtp", "/kyc/otp/send")
      .setPayload(OtpSendRequest)
      .addSuccess(OtpSendResponse)
      .addError(ServiceUnavailableError)
      .annotate(OpenApi.Summary, "Send OTP for KYC")
  )
  .add(
    HttpApiEndpoint.post("verifyOtp", "/kyc/otp/verify")
      .setPayload(OtpVerifyRequest)
      .setHeaders(MockScenarioHeaders)
      .addSuccess(OtpVerifyResponse)
      .addError(OtpInvalidError)
      .addError(ServiceUnavailableError)
      .addError(BadGatewayError)
      .annotate(OpenApi.Summary, "Verify OTP for KYC")
  )
  .add(
    HttpApiEndpoint.post("createPayout", "/payouts")
      .setPayload(CreatePayoutRequest)
      .setHeaders(CreatePayoutHeaders)
      .addSuccess(Payout, { status: 201 })
      .addError(IdempotencyKeyReusedError)
      .addError(NeedsKycError)
      .addError(MercadoCerradoError)
      .addError(RequoteError)
      .addError(BelowMinimumError)
      .addError(DestinationMismatchError)
      .addError(ConflictError)
      .addError(ServiceUnavailableError)
      .addError(BadGatewayError)
      .annotate(OpenApi.Summary, "Create a BRE-B payout")
  )
  .add(
    HttpApiEndpoint.get("getPayout")`/payouts/${payoutId}`
      .addSuccess(Payout)
      .addError(NotFoundError)
      .annotate(OpenApi.Summary, "Get a payout")
  )
  .add(
    HttpApiEndpoint.post("confirmPayout")`/payouts/${payoutId}/confirm`
      .setPayload(ConfirmPayoutRequest)
      .setHeaders(MockScenarioHeaders)
      .addSuccess(Payout)
      .addError(NotFoundError)
      .addError(TxHashReusedError)
      .addError(RequoteError)
      .addError(ConflictError)
      .addError(ServiceUnavailableError)
      .annotate(OpenApi.Summary, "Confirm a payout deposit")
  )
  .add(
    HttpApiEndpoint.get("listPayouts", "/payouts")
      .setUrlParams(ListPayoutsParams)
      .addSuccess(PayoutList)
      .annotate(OpenApi.Summary, "List payouts for this integration")
  )
  .middleware(Authentication)
  .addError(BadRequestError)
  .addError(TooManyRequestsError)
  .prefix("/api/integrations/breb")
  .annotate(OpenApi.Title, "BRE-B")
{}
