import { Schema } from "effect"
import { Address, Email, IsoTimestamp } from "./Primitives.ts"

export const KycStatus = Schema.Literals(["not_started", "pending", "approved", "rejected"]).annotate({
  identifier: "KycStatus"
})
export type KycStatus = typeof KycStatus.Type

export const OtpSendRequest = Schema.Struct({
  email: Email,
  userAddress: Address
}).annotate({ identifier: "OtpSendRequest" })

export const OtpSendResponse = Schema.Struct({
  userAddress: Schema.String,
  expiresAt: IsoTimestamp,
  debugCode: Schema.optionalKey(Schema.String).annotate({
    description: "Mock mode only: the code that was sent"
  })
}).annotate({ identifier: "OtpSendResponse" })
export type OtpSendResponse = typeof OtpSendResponse.Type

export const OtpVerifyRequest = Schema.Struct({
  userAddress: Address,
  code: Schema.String.annotate({
    description: "The 6-digit code that was sent; any other code is 400 `otp_invalid`"
  })
}).annotate({ identifier: "OtpVerifyRequest" })

/** A customer's KYC: what the OTP verify answers, and the object of `kyc.*` events. */
export const KycCustomer = Schema.Struct({
  userAddress: Schema.String,
  kycStatus: KycStatus,
  kycUrl: Schema.NullOr(Schema.String)
}).annotate({ identifier: "KycCustomer" })
export type KycCustomer = typeof KycCustomer.Type

export const OtpVerifyResponse = KycCustomer.annotate({ identifier: "OtpVerifyResponse" })
export type OtpVerifyResponse = typeof OtpVerifyResponse.Type
