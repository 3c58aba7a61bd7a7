/**
 * Fresh data for every scenario: a new wallet address per user (so scenarios never collide, and can run
 * again and again against a long-lived deployment), new txHashes and Idempotency-Keys, and the usual
 * steps a scenario starts from (an approved user, a prepared payout).
 */
import { checksumAddress, type OtpSendResponse, type Payout } from "@cop-integrations/contracts"
import { Effect } from "effect"
import { ok } from "./api.ts"
import { check } from "./check.ts"
import { failure, type ScenarioFailure, show } from "./failure.ts"
import type { Answered, Auth } from "./http.ts"
import type { Kit } from "./scenario.ts"

const randomHex = (bytes: number): string =>
  Array.from(crypto.getRandomValues(new Uint8Array(bytes)), (byte) => byte.toString(16).padStart(2, "0")).join("")

/** A new EIP-55 checksummed address nobody has used (20 random bytes: the kit never signs). */
export const freshAddress = (): string => checksumAddress(`0x${randomHex(20)}`)

export const randomTxHash = (): string => `0x${randomHex(32)}`

export const idempotencyKey = (): string => `conformance-${crypto.randomUUID()}`

export const uniqueSuffix = (): string => randomHex(4)

export const testEmail = (): string => `conformance+${uniqueSuffix()}@example.com`

export interface PayoutRequest {
  readonly userAddress: string
  readonly destinationCop: string
  readonly breBKey: string
  readonly accountOwnerName: string
  readonly fromToken?: string
  readonly quoteId?: string
  readonly previewId?: string
}

export const payoutRequest = (userAddress: string, overrides: Partial<PayoutRequest> = {}): PayoutRequest => ({
  userAddress,
  destinationCop: "100000",
  breBKey: `@conf${uniqueSuffix()}`,
  accountOwnerName: "Conformance Kit",
  ...overrides
})

/** Sends an OTP for a fresh address and verifies it with the `debugCode` (mock mode): KYC approved. */
export const approvedUser = (kit: Kit, auth: Auth = "primary"): Effect.Effect<string, ScenarioFailure> =>
  approveUnder(kit, freshAddress(), auth)

/** The mock OTP, read from the send response (never assumed to be the default). */
export const debugCodeOf = (sent: OtpSendResponse, exchange: Answered): Effect.Effect<string, ScenarioFailure> =>
  sent.debugCode !== undefined && /^[0-9]{6}$/.test(sent.debugCode)
    ? Effect.succeed(sent.debugCode)
    : Effect.fail(failure("a mock deployment returns the OTP in debugCode", {
      expected: "debugCode: a 6-digit string",
      actual: show(sent),
      exchange
    }))

/** Approves KYC of `userAddress` for the integration behind `auth` (mock mode: the `debugCode`). */
export const approveUnder = (kit: Kit, userAddress: string, auth: Auth): Effect.Effect<string, ScenarioFailure> =>
  Effect.gen(function*() {
    const sendReply = yield* kit.call("sendOtp", { json: { email: testEmail(), userAddress }, auth })
    const code = yield* debugCodeOf(yield* ok(sendReply, "an OTP send"), sendReply.exchange)
    const verifyReply = yield* kit.call("verifyOtp", { json: { userAddress, code }, auth })
    const verified = yield* ok(verifyReply, "verifying the debugCode")
    yield* check(verified.kycStatus === "approved", "a valid OTP approves KYC in mock mode", {
      expected: "kycStatus approved",
      actual: show(verified),
      exchange: verifyReply.exchange
    })
    return userAddress
  })

export const createPayout = (
  kit: Kit,
  request: PayoutRequest,
  options: { readonly auth?: Auth; readonly headers?: Readonly<Record<string, string>> } = {}
): Effect.Effect<Payout, ScenarioFailure> =>
  kit.call("createPayout", { json: request, auth: options.auth ?? "primary", headers: options.headers ?? {} }).pipe(
    Effect.flatMap((reply) => ok(reply, "201 with a prepared payout"))
  )

/** An approved user's prepared payout. */
export const preparedPayout = (
  kit: Kit,
  overrides: Partial<PayoutRequest> = {},
  auth: Auth = "primary"
): Effect.Effect<Payout, ScenarioFailure> =>
  Effect.flatMap(approvedUser(kit, auth), (user) => createPayout(kit, payoutRequest(user, overrides), { auth }))

export const confirmPayout = (
  kit: Kit,
  payoutId: string,
  body: { readonly txHash: string; readonly feeTxHash?: string },
  auth: Auth = "primary"
): Effect.Effect<Payout, ScenarioFailure> =>
  kit.call("confirmPayout", { path: { payoutId }, json: body, auth }).pipe(
    Effect.flatMap((reply) => ok(reply, "200 with the confirmed payout"))
  )
