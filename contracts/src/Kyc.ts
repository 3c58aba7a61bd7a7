import { Schema } from "effect"
import { Address, Email, IsoTimestamp, RejectUnknownFields } from "./Primitives.ts"

export const KycStatus = Schema.Literal("not_started", "pending", "approved", "rejected").annotations({
  identifier: "KycStatus"
})
export type KycStatus = typeof KycStatus.Type

export const OtpSendRequest = Schema.Struct({
  email: Email,
  userAddress: Address
}).annotations({ identifier: "OtpSendRequest", ...RejectUnknownFields })

export const OtpSendResponse = Schema.Struct({
  userAddress: Schema.String,
  expiresAt: IsoTimestamp,
  debugCode: Schema.optionalWith(Schema.String, { exact: true }).annotations({
    description: "Mock mode only: the code that was sent"
  })
}).annotations({ identifier: "OtpSendResponse" })
export type OtpSendResponse = typeof OtpSendResponse.Type

export const OtpVerifyRequest = Schema.Struct({
  userAddress: Address,
  code: Schema.String.annotations({
    description: "The 6-digit code that was sent; any other code is 400 `otp_invalid`"
  })
}).annotations({ identifier: "OtpVerifyRequest", ...RejectUnknownFields })

/** A customer's KYC: what the OTP verify answers, and the object of `kyc.*` events. */
export const KycCustomer = Schema.Struct({
  userAddress: Schema.String,
  kycStatus: KycStatus,
  kycUrl: Schema.NullOr(Schema.String)
}).annotations({ identifier: "KycCustomer" })
export type KycCustomer = typeof KycCustomer.Type

export const OtpVerifyResponse = KycCustomer.annotations({ identifier: "OtpVerifyResponse" })
export type OtpVerifyResponse = typeof OtpVerifyResponse.Type
