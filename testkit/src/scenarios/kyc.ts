import { Effect } from "effect"
import { ok, rejected } from "../api.ts"
import { check, checkEqual, checkTimestamps } from "../check.ts"
import { show } from "../failure.ts"
import { debugCodeOf, freshAddress, testEmail } from "../fixtures.ts"
import { type Kit, scenario } from "../scenario.ts"

const sendOtp = (kit: Kit, userAddress: string) =>
  kit.call("sendOtp", { json: { email: testEmail(), userAddress }, retryOn429: false })

const sentOtp = (kit: Kit, userAddress: string) =>
  Effect.flatMap(
    sendOtp(kit, userAddress),
    (reply) => Effect.map(ok(reply, "200 OtpSendResponse"), (value) => ({ value, reply }))
  )

/** Sends an OTP to a fresh address and reads the code from `debugCode` (mock mode). */
const otpForFreshUser = (kit: Kit) =>
  Effect.gen(function*() {
    const userAddress = freshAddress()
    const sent = yield* sentOtp(kit, userAddress)
    const code = yield* debugCodeOf(sent.value, sent.reply.exchange)
    return { userAddress, code }
  })

const verifyOtp = (kit: Kit, userAddress: string, code: string) =>
  kit.call("verifyOtp", { json: { userAddress, code } })

/** Verifies `code` and checks it approved the customer: `answered` names the 200, `approves` the check. */
const verifyApproves = (
  kit: Kit,
  userAddress: string,
  code: string,
  labels: { readonly answered: string; readonly approves: string }
) =>
  Effect.gen(function*() {
    const reply = yield* verifyOtp(kit, userAddress, code)
    const verified = yield* ok(reply, labels.answered)
    yield* checkEqual(labels.approves, verified.kycStatus, "approved", reply.exchange)
  })

const wrongCode = (code: string): string => String((Number(code) + 1) % 1_000_000).padStart(6, "0")

const OTP_VALIDITY_MS = 10 * 60 * 1000

const readCustomer = (kit: Kit, userAddress: string) => kit.call("getKycCustomer", { path: { userAddress } })

/** How the API shows an e-mail: its first character, `***`, then `@` and the domain. */
const masked = (email: string): string => {
  const [local = "", domain = ""] = email.split("@")
  return `${local.slice(0, 1)}***@${domain}`
}

export const kycScenarios = [
  scenario({
    id: "OTP-001",
    title: "sending an OTP answers userAddress, expiresAt 10 minutes ahead, and debugCode only in mock mode",
    rules: ["R-OTP-1"],
    tags: ["kyc", "otp"],
    requires: { moneyMoving: true },
    run: (kit) =>
      Effect.gen(function*() {
        const userAddress = freshAddress()
        const { reply, value } = yield* sentOtp(kit, userAddress)
        yield* checkEqual("the response echoes userAddress", value.userAddress, userAddress, reply.exchange)
        yield* checkTimestamps(
          "timestamps are ISO 8601 UTC with milliseconds",
          { expiresAt: value.expiresAt },
          reply.exchange
        )
        const sentAt = Date.parse(reply.exchange.response.headers["date"] ?? reply.exchange.startedAt)
        const validity = Date.parse(value.expiresAt) - sentAt
        yield* check(Math.abs(validity - OTP_VALIDITY_MS) <= 90_000, "an OTP is valid for 10 minutes", {
          expected: "expiresAt ≈ 10 minutes after the send",
          actual: `${Math.round(validity / 1000)} s after the send (${value.expiresAt})`,
          exchange: reply.exchange
        })
        if (kit.mode === "mock") {
          yield* debugCodeOf(value, reply.exchange)
        } else {
          yield* check(value.debugCode === undefined, "a live deployment never reveals the OTP", {
            expected: "no debugCode in live mode",
            actual: show(value),
            exchange: reply.exchange
          })
        }
      })
  }),
  scenario({
    id: "OTP-002",
    title: "verifying the debugCode approves KYC",
    rules: ["R-OTP-2"],
    tags: ["kyc", "otp"],
    requires: { mock: true, moneyMoving: true },
    run: (kit) =>
      Effect.gen(function*() {
        const { userAddress, code } = yield* otpForFreshUser(kit)
        const reply = yield* verifyOtp(kit, userAddress, code)
        const verified = yield* ok(reply, "200 OtpVerifyResponse")
        yield* checkEqual("a valid code approves KYC in mock mode", verified.kycStatus, "approved", reply.exchange)
        yield* checkEqual("the response echoes userAddress", verified.userAddress, userAddress, reply.exchange)
      })
  }),
  scenario({
    id: "OTP-003",
    title: "a wrong code is 400 otp_invalid, and the right code still works after it",
    rules: ["R-OTP-3"],
    tags: ["kyc", "otp", "errors"],
    requires: { mock: true, moneyMoving: true },
    run: (kit) =>
      Effect.gen(function*() {
        const { userAddress, code } = yield* otpForFreshUser(kit)
        yield* rejected(
          yield* verifyOtp(kit, userAddress, wrongCode(code)),
          400,
          "otp_invalid",
          "a wrong code is otp_invalid"
        )
        yield* verifyApproves(kit, userAddress, code, {
          answered: "the right code after one wrong attempt",
          approves: "the right code approves KYC"
        })
      })
  }),
  scenario({
    id: "OTP-004",
    title: "after 5 wrong attempts the code is burnt: even the right one is otp_invalid",
    rules: ["R-OTP-4"],
    tags: ["kyc", "otp", "errors", "limits"],
    requires: { mock: true, moneyMoving: true },
    run: (kit) =>
      Effect.gen(function*() {
        const { userAddress, code } = yield* otpForFreshUser(kit)
        for (let attempt = 1; attempt <= 5; attempt++) {
          yield* rejected(
            yield* verifyOtp(kit, userAddress, wrongCode(code)),
            400,
            "otp_invalid",
            `wrong attempt ${attempt} is otp_invalid`
          )
        }
        const reply = yield* verifyOtp(kit, userAddress, code)
        yield* rejected(reply, 400, "otp_invalid", "after 5 wrong attempts the code is burnt")
      })
  }),
  scenario({
    id: "OTP-005",
    title: "a second send within 30 s is 429 ErrorBody with Retry-After",
    rules: ["R-OTP-5"],
    tags: ["kyc", "otp", "limits"],
    requires: { moneyMoving: true },
    run: (kit) =>
      Effect.gen(function*() {
        const userAddress = freshAddress()
        yield* sentOtp(kit, userAddress)
        const reply = yield* sendOtp(kit, userAddress)
        yield* rejected(reply, 429, "none", "a resend within the cooldown is 429")
        const retryAfter = Number(reply.exchange.response.headers["retry-after"])
        yield* check(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 30, "a 429 says when to retry", {
          expected: "Retry-After: whole seconds, 1 to 30",
          actual: `Retry-After: ${reply.exchange.response.headers["retry-after"] ?? "(absent)"}`,
          exchange: reply.exchange
        })
      })
  }),
  scenario({
    id: "OTP-007",
    title: "a code that is not 6 digits is 400 otp_invalid, and the right code still works after it",
    rules: ["R-OTP-3"],
    tags: ["kyc", "otp", "errors"],
    requires: { mock: true, moneyMoving: true },
    run: (kit) =>
      Effect.gen(function*() {
        const { userAddress, code } = yield* otpForFreshUser(kit)
        for (const malformed of ["12345", "1234567", "12a456", ""]) {
          yield* rejected(
            yield* verifyOtp(kit, userAddress, malformed),
            400,
            "otp_invalid",
            `the code ${JSON.stringify(malformed)} is otp_invalid`
          )
        }
        yield* verifyApproves(kit, userAddress, code, {
          answered: "the right code after malformed ones",
          approves: "the right code approves KYC"
        })
      })
  }),
  scenario({
    id: "OTP-008",
    title: "X-Mock-Scenario: provider_unavailable on verify is 503 ErrorBody, and the same code verifies afterwards",
    rules: ["R-MOCK-1", "R-OTP-2"],
    tags: ["kyc", "otp", "errors"],
    requires: { mock: true, moneyMoving: true },
    run: (kit) =>
      Effect.gen(function*() {
        const { userAddress, code } = yield* otpForFreshUser(kit)
        const down = yield* kit.call("verifyOtp", {
          json: { userAddress, code },
          headers: { "X-Mock-Scenario": "provider_unavailable" }
        })
        yield* rejected(down, 503, "none", "verify while the provider is unavailable is 503")
        yield* verifyApproves(kit, userAddress, code, {
          answered: "the same code once the provider is back (the 503 did not burn it)",
          approves: "the code approves KYC"
        })
      })
  }),
  scenario({
    id: "KYC-001",
    title: "GET kyc/customers/{userAddress}: not_started after the send, approved after the verify, the e-mail masked",
    rules: ["R-KYC-1"],
    tags: ["kyc"],
    requires: { mock: true, moneyMoving: true },
    run: (kit) =>
      Effect.gen(function*() {
        const userAddress = freshAddress()
        const email = testEmail()
        const sent = yield* kit.call("sendOtp", { json: { email, userAddress }, retryOn429: false })
        const code = yield* debugCodeOf(yield* ok(sent, "200 OtpSendResponse"), sent.exchange)
        const before = yield* readCustomer(kit, userAddress)
        const started = yield* ok(before, "200 KycCustomerRecord after the send")
        yield* checkEqual(
          "after a send the customer is not_started, its e-mail masked",
          { userAddress: started.userAddress, kycStatus: started.kycStatus, email: started.email },
          { userAddress, kycStatus: "not_started", email: masked(email) },
          before.exchange
        )
        yield* check(
          !before.exchange.response.body.includes(email.split("@")[0]!),
          "the e-mail is never shown in full",
          {
            expected: `no ${email.split("@")[0]} in the body`,
            actual: before.exchange.response.body,
            exchange: before.exchange
          }
        )
        yield* ok(yield* verifyOtp(kit, userAddress, code), "200 OtpVerifyResponse")
        const after = yield* readCustomer(kit, userAddress)
        const approved = yield* ok(after, "200 KycCustomerRecord after the verify")
        yield* checkEqual(
          "after a mock verify the customer is approved",
          { userAddress: approved.userAddress, kycStatus: approved.kycStatus, email: approved.email },
          { userAddress, kycStatus: "approved", email: masked(email) },
          after.exchange
        )
        yield* checkTimestamps(
          "timestamps are ISO 8601 UTC with milliseconds",
          { createdAt: approved.createdAt, updatedAt: approved.updatedAt },
          after.exchange
        )
        yield* check(
          approved.createdAt === started.createdAt && Date.parse(approved.updatedAt) >= Date.parse(started.updatedAt),
          "createdAt stays, updatedAt does not go back",
          {
            expected: `createdAt ${started.createdAt}, updatedAt at or after ${started.updatedAt}`,
            actual: `createdAt ${approved.createdAt}, updatedAt ${approved.updatedAt}`,
            exchange: after.exchange
          }
        )
      })
  }),
  scenario({
    id: "KYC-002",
    title: "GET kyc/customers/{userAddress} for an address no OTP was sent to is 404 ErrorBody",
    rules: ["R-KYC-2"],
    tags: ["kyc", "errors"],
    run: (kit) =>
      Effect.flatMap(
        readCustomer(kit, freshAddress()),
        (reply) => rejected(reply, 404, "none", "an address no OTP was sent to is not a customer")
      )
  }),
  scenario({
    id: "KYC-003",
    title: "a verify repeated for an approved customer answers 200 with the customer, not otp_invalid",
    rules: ["R-KYC-3"],
    tags: ["kyc", "otp"],
    requires: { mock: true, moneyMoving: true },
    run: (kit) =>
      Effect.gen(function*() {
        const { userAddress, code } = yield* otpForFreshUser(kit)
        yield* ok(yield* verifyOtp(kit, userAddress, code), "200 OtpVerifyResponse")
        const reply = yield* verifyOtp(kit, userAddress, code)
        const again = yield* ok(reply, "200 for the approved customer (its code was used: nothing to check)")
        yield* checkEqual(
          "the repeated verify answers the approved customer",
          { userAddress: again.userAddress, kycStatus: again.kycStatus },
          { userAddress, kycStatus: "approved" },
          reply.exchange
        )
      })
  }),
  scenario({
    id: "OTP-006",
    title: "verifying when no OTP was sent is 400 otp_invalid",
    rules: ["R-OTP-3"],
    tags: ["kyc", "otp", "errors"],
    run: (kit) =>
      Effect.flatMap(
        verifyOtp(kit, freshAddress(), "123456"),
        (reply) => rejected(reply, 400, "otp_invalid", "no OTP was sent for this address")
      )
  })
]
