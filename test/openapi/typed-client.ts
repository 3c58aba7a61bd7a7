/**
 * A partner's typed client: `openapi-typescript` types generated from the served document (written beside this
 * file as api.ts by document-tools.test.ts) and `openapi-fetch`. It must type-check with tsc, strict, and then run
 * the whole payout flow against BASE_URL with API_KEY. It prints one JSON line with what it saw.
 *
 * What tsc checks here besides the calls: response enums are enums (`fromToken`, `status`, `kycStatus`), and an
 * error answer is tested on `errorCode` without `"errorCode" in error` (every error body declares the property).
 */
import createClient from "openapi-fetch"
import type { components, paths } from "./api.ts"

type Schemas = components["schemas"]

const baseUrl = process.env["BASE_URL"] ?? ""
const apiKey = process.env["API_KEY"] ?? ""
const userAddress = process.env["USER_ADDRESS"] ?? ""
const txHash = process.env["TX_HASH"] ?? ""
const otherUserAddress = process.env["OTHER_USER_ADDRESS"] ?? ""

const client = createClient<paths>({ baseUrl, headers: { authorization: `Bearer ${apiKey}` } })

const quote = await client.GET("/api/integrations/breb/quote", { params: { query: { destinationCop: "250000" } } })
const sent = await client.POST("/api/integrations/breb/kyc/otp/send", {
  body: { email: "maria@example.com", userAddress }
})
const verified = await client.POST("/api/integrations/breb/kyc/otp/verify", {
  body: { userAddress, code: sent.data?.debugCode ?? "" }
})
const created = await client.POST("/api/integrations/breb/payouts", {
  params: { header: { "idempotency-key": `typed-client-${txHash.slice(2, 18)}` } },
  body: {
    userAddress,
    destinationCop: "250000",
    breBKey: "@maria2024",
    accountOwnerName: "Maria Gomez",
    ...(quote.data === undefined ? {} : { quoteId: quote.data.quoteId })
  }
})
const payoutId = created.data?.payoutId ?? ""
const fromToken: Schemas["FundingToken"] | undefined = created.data?.fromToken
const kycStatus: Schemas["KycStatus"] | undefined = verified.data?.kycStatus
const quoteToken: "USDC" | "COPm" | undefined = quote.data?.fromToken

// A user who never did KYC: 409 needs_kyc, told apart by its errorCode alone.
const refused = await client.POST("/api/integrations/breb/payouts", {
  body: { userAddress: otherUserAddress, destinationCop: "250000", breBKey: "@maria2024", accountOwnerName: "Ana" }
})
const needsKyc: string | undefined = refused.error?.errorCode === "needs_kyc" ? refused.error.error : undefined
const confirmed = await client.POST("/api/integrations/breb/payouts/{payoutId}/confirm", {
  params: { path: { payoutId } },
  body: { txHash }
})
const fetched = await client.GET("/api/integrations/breb/payouts/{payoutId}", { params: { path: { payoutId } } })
const page = await client.GET("/api/integrations/breb/payouts", { params: { query: { limit: 2 } } })
const missing = await client.GET("/api/integrations/breb/payouts/{payoutId}", {
  params: { path: { payoutId: "po_none" } }
})

console.log(JSON.stringify({
  statuses: [quote, sent, verified, created, confirmed, fetched, page, missing, refused].map((answer) =>
    answer.response.status
  ),
  kycStatus,
  fromToken,
  quoteToken,
  needsKyc,
  createdStatus: created.data?.status,
  confirmedStatus: confirmed.data?.status satisfies Schemas["PayoutStatus"] | undefined,
  fetchedId: fetched.data?.payoutId,
  pageSize: page.data?.items.length,
  missingError: missing.error?.error
}))
