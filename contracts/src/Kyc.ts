import { Schema } from "effect"
import { KYC_CUSTOMER_EXAMPLE } from "./Examples.ts"
import { Address, Email, IsoTimestamp, unnamed } from "./Primitives.ts"

export const KycStatus = Schema.Literals(["not_started", "pending", "approved", "rejected"]).annotate({
  identifier: "KycStatus",
  description:
    "`not_started`: an OTP was sent, none verified yet; `pending`: the provider's KYC was started (live mode: the user completes `kycUrl`) and has not decided; `approved` / `rejected`: decided (mock mode approves on the right code). Payouts need `approved`."
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

/** The wallet address a KYC customer is read by (path parameter). */
export const KycUserAddressParam = unnamed(Address, { description: "The customer's wallet address (EIP-55)" })

/**
 * A customer's KYC as `GET kyc/customers/{userAddress}` answers it: the status, the hosted KYC link (live mode, while
 * pending), the e-mail the codes go to (masked) and when the customer was first and last changed.
 */
export const KycCustomerRecord = Schema.Struct({
  userAddress: Schema.String.annotate({ description: "The customer's wallet address (EIP-55 checksummed)" }),
  kycStatus: KycStatus,
  kycUrl: Schema.NullOr(Schema.String).annotate({
    description: "Live mode: the provider's hosted KYC link the user completes; null when there is none"
  }),
  email: Schema.String.annotate({
    description:
      "The e-mail the last OTP was sent to, masked: its first character, `***`, then `@` and the domain (`m***@example.com`)"
  }),
  createdAt: IsoTimestamp,
  updatedAt: IsoTimestamp
}).annotate({ identifier: "KycCustomerRecord", examples: [KYC_CUSTOMER_EXAMPLE] })
export type KycCustomerRecord = typeof KycCustomerRecord.Type
