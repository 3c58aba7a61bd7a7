import { createHash, timingSafeEqual } from "node:crypto"
import { SqlClient } from "effect/sql"
import {
  type IntegrationId,
  OtpInvalid,
  type OtpSendResponse,
  type OtpVerifyResponse,
  ServiceUnavailable
} from "@cop-integrations/contracts"
import { Context, Data, Effect, Layer, Option } from "effect"
import { addSeconds, now } from "../base/Clock.ts"
import { tooManyRequests } from "../base/ResponseHints.ts"
import { newInternalId } from "../base/ids.ts"
import { Mailer } from "./Mailer.ts"
import { PayoutProvider } from "../provider/PayoutProvider.ts"
import { providerIdempotencyKey } from "../provider/IdempotencyKeys.ts"
import { providerFailure } from "../provider/ProviderErrors.ts"
import { CustomerKyc } from "./CustomerKyc.ts"
import { CustomerRepo } from "./CustomerRepo.ts"
import { OtpCodes } from "./OtpCodes.ts"
import { OtpRepo, type SendStats } from "./OtpRepo.ts"

export const OTP_TTL_SECONDS = 10 * 60
export const OTP_MAX_ATTEMPTS = 5
export const OTP_RESEND_COOLDOWN_SECONDS = 30
export const OTP_MAX_SENDS_PER_DAY = 10

const SEND_WINDOW_SECONDS = 24 * 60 * 60

/** When a send is refused: why, and in how many seconds one is allowed again (the later of the two limits). */
const sendRefusal = (
  stats: SendStats,
  at: Date
): Option.Option<{ readonly error: string; readonly seconds: number }> => {
  const secondsUntil = (from: Date | null, seconds: number) =>
    from === null ? 0 : seconds - (at.getTime() - from.getTime()) / 1000
  const cooldown = secondsUntil(stats.last_sent_at, OTP_RESEND_COOLDOWN_SECONDS)
  const daily = stats.sends_today >= OTP_MAX_SENDS_PER_DAY
    ? secondsUntil(stats.limiting_sent_at, SEND_WINDOW_SECONDS)
    : 0
  if (cooldown <= 0 && daily <= 0) return Option.none()
  return Option.some(
    daily >= cooldown
      ? { error: `at most ${OTP_MAX_SENDS_PER_DAY} OTPs a day per user; retry later`, seconds: daily }
      : { error: `an OTP was sent less than ${OTP_RESEND_COOLDOWN_SECONDS} s ago; retry later`, seconds: cooldown }
  )
}

/** Codes are stored only as a hash salted with their challenge id. */
const hashCode = (challengeId: string, code: string) =>
  createHash("sha256").update(`${challengeId}:${code}`).digest("hex")

const sameHash = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b))

const OTP_FORMAT = /^[0-9]{6}$/

interface SendInput {
  readonly integrationId: IntegrationId
  readonly email: string
  readonly userAddress: string
}

/** A challenge recorded by a send whose e-mail has not gone out yet. */
interface PendingChallenge {
  readonly id: string
  readonly code: string
  readonly revealed: boolean
  readonly expiresAt: Date
  /** The active challenges this send superseded (normally at most one), restored if the e-mail fails. */
  readonly supersededIds: ReadonlyArray<string>
}

type VerifyOutcome = Data.TaggedEnum<{
  Approved: { readonly challengeId: string; readonly consumedAt: Date }
  /** `nothingToCheck`: no code is waiting (none was sent, or the last one was used), so none was tried. */
  Rejected: { readonly error: string; readonly nothingToCheck: boolean }
}>
const VerifyOutcome = Data.taggedEnum<VerifyOutcome>()

export class OtpService extends Context.Service<OtpService>()("OtpService", {
  make: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const otps = yield* OtpRepo
    const codes = yield* OtpCodes
    const customers = yield* CustomerRepo
    const mailer = yield* Mailer
    const provider = yield* PayoutProvider
    const customerKyc = yield* CustomerKyc

    /**
     * The send's bookkeeping, in one short transaction under the user's advisory lock: the limits, the older
     * active code superseded, the new challenge recorded, the address remembered. It commits before the e-mail
     * goes out, so a slow e-mail API holds no connection and no lock (DESIGN §3; issue #7).
     */
    const recordChallenge = (input: SendInput, userAddress: string, at: Date) =>
      Effect.gen(function*() {
        const owner = { integrationId: input.integrationId, userAddress }
        yield* otps.lockOwner(owner)
        const stats = yield* otps.sendStats(owner, addSeconds(at, -SEND_WINDOW_SECONDS), OTP_MAX_SENDS_PER_DAY)
        const refusal = sendRefusal(stats, at)
        if (Option.isSome(refusal)) {
          return yield* tooManyRequests("otp_sends", refusal.value.error, refusal.value.seconds)
        }
        const { code, revealed } = yield* codes.next
        const id = newInternalId("otp")
        const expiresAt = addSeconds(at, OTP_TTL_SECONDS)
        const supersededIds = yield* otps.supersede(owner, at)
        yield* otps.insert({
          id,
          integration_id: input.integrationId,
          user_address: userAddress,
          email: input.email,
          code_hash: hashCode(id, code),
          created_at: at,
          expires_at: expiresAt
        })
        yield* customers.upsertEmail(owner, input.email, at)
        const pending: PendingChallenge = { id, code, revealed, expiresAt, supersededIds }
        return pending
      }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))

    /**
     * The e-mail could not go out: the send is undone as if it never happened, in one short transaction under
     * the same lock. The new challenge is deleted, so it counts for neither the resend cooldown nor the daily
     * limit and an immediate retry is allowed (the answer is 503). The code it superseded is active again, as it
     * was before this send (it was delivered earlier and may be what the user is about to type), with its own
     * expiry and attempts. Nothing is undone if the new challenge was used meanwhile (a verify matched it: only
     * possible with a sandbox's fixed code) or if another code is active. The address stays remembered: it is
     * the one the user gave last, whether or not the e-mail reached it. If the process dies between the steps
     * the challenge stays, as if sent and lost: the user asks again after the cooldown.
     */
    const undoChallenge = (input: SendInput, userAddress: string, pending: PendingChallenge) =>
      Effect.gen(function*() {
        const owner = { integrationId: input.integrationId, userAddress }
        yield* otps.lockOwner(owner)
        const deleted = yield* otps.deleteUnconsumed(pending.id)
        if (!deleted || pending.supersededIds.length === 0) return
        yield* otps.restoreSuperseded(owner, pending.supersededIds)
      }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))

    const send = Effect.fn("OtpService.send")(function*(input: SendInput) {
      const userAddress = input.userAddress.toLowerCase()
      const pending = yield* recordChallenge(input, userAddress, yield* now)
      // Outside any transaction (MailerHttp has its own timeout). On failure the send is undone and answered 503.
      yield* mailer.sendOtp({ to: input.email, code: pending.code }).pipe(
        Effect.catchTag("MailerUnavailable", () =>
          Effect.andThen(
            undoChallenge(input, userAddress, pending),
            Effect.fail(new ServiceUnavailable({ error: "the OTP e-mail could not be sent; retry later" }))
          ))
      )
      const response: OtpSendResponse = {
        userAddress: input.userAddress,
        expiresAt: pending.expiresAt.toISOString(),
        ...(pending.revealed ? { debugCode: pending.code } : {})
      }
      return response
    })

    // The provider could not start KYC: the code the user typed stays valid for a retry, unless a newer
    // code was sent meanwhile.
    const restoreCode = (
      owner: { readonly integrationId: IntegrationId; readonly userAddress: string },
      approved: { readonly challengeId: string; readonly consumedAt: Date }
    ) => otps.restoreConsumed(owner, approved)

    // Checks the code and records the attempt; the attempt counter commits even when the code is wrong.
    const check = (integrationId: IntegrationId, userAddress: string, code: string) =>
      Effect.gen(function*() {
        yield* otps.lockOwner({ integrationId, userAddress })
        const found = yield* otps.activeChallenge({ integrationId, userAddress })
        const at = yield* now
        if (Option.isNone(found)) {
          return VerifyOutcome.Rejected({
            error: "no active OTP for this userAddress: send one first",
            nothingToCheck: true
          })
        }
        const challenge = found.value
        if (challenge.expires_at.getTime() <= at.getTime()) {
          return VerifyOutcome.Rejected({ error: "the OTP has expired: send a new one", nothingToCheck: false })
        }
        if (challenge.attempts >= OTP_MAX_ATTEMPTS) {
          return VerifyOutcome.Rejected({
            error: "too many wrong attempts: this OTP is burnt, send a new one",
            nothingToCheck: false
          })
        }
        if (!sameHash(hashCode(challenge.id, code), challenge.code_hash)) {
          yield* otps.countAttempt(challenge.id)
          const left = OTP_MAX_ATTEMPTS - challenge.attempts - 1
          return VerifyOutcome.Rejected({
            error: left > 0
              ? `wrong OTP code (${left} attempts left)`
              : "wrong OTP code: no attempts left, send a new one",
            nothingToCheck: false
          })
        }
        yield* otps.consume(challenge.id, at)
        return VerifyOutcome.Approved({ challengeId: challenge.id, consumedAt: at })
      }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))

    const verify = Effect.fn("OtpService.verify")(function*(
      input: { readonly integrationId: IntegrationId; readonly userAddress: string; readonly code: string }
    ) {
      const owner = { integrationId: input.integrationId, userAddress: input.userAddress.toLowerCase() }
      if (!OTP_FORMAT.test(input.code)) {
        return yield* Effect.fail(new OtpInvalid({ error: "code: an OTP is the 6 digits that were sent" }))
      }
      const outcome = yield* check(owner.integrationId, owner.userAddress, input.code)
      if (outcome._tag === "Rejected") {
        // A verify repeated after its code was used, or after the provider approved the customer, has nothing to
        // check: an approved customer is answered as it is. A code waiting to be checked is checked first.
        const approved = outcome.nothingToCheck
          ? Option.filter(yield* customerKyc.current(owner), (row) => row.kyc_status === "approved")
          : Option.none()
        if (Option.isNone(approved)) return yield* Effect.fail(new OtpInvalid({ error: outcome.error }))
        const response: OtpVerifyResponse = {
          userAddress: input.userAddress,
          kycStatus: approved.value.kyc_status,
          kycUrl: approved.value.kyc_url
        }
        return response
      }
      const customer = yield* customerKyc.current(owner)
      // One provider customer per (integration, user), kept once the provider has made it, whatever e-mail the
      // codes go to now: an approved user stays approved, a rejected one is not started over by a new address, and
      // a pending one keeps the KYC link that may be half filled in. So a later verify starts nothing at the provider
      // (a pending customer's status is read from it: CustomerKyc).
      const started = Option.filter(customer, (row) => row.provider_customer_id !== null)
      if (Option.isSome(started)) {
        const response: OtpVerifyResponse = {
          userAddress: input.userAddress,
          kycStatus: started.value.kyc_status,
          kycUrl: started.value.kyc_url
        }
        return response
      }
      const email = Option.match(customer, { onNone: () => "", onSome: (row) => row.email })
      // The key names what is asked (this user's KYC under this e-mail): a retry after a lost answer reaches the
      // same customer, and a start under another e-mail is another request, not a reuse of the key (which the
      // provider refuses: idempotency_key_reused).
      const kyc = yield* provider.createKycLink({
        idempotencyKey: providerIdempotencyKey("kyc_link", owner.integrationId, owner.userAddress, email),
        email,
        userAddress: input.userAddress
      }).pipe(Effect.catch((error) => Effect.andThen(restoreCode(owner, outcome), providerFailure(error))))
      const kycStatus = yield* customers.setKyc(
        owner,
        { providerCustomerId: kyc.customerId, kycStatus: kyc.kycStatus, kycUrl: kyc.kycUrl },
        yield* now
      )
      const response: OtpVerifyResponse = { userAddress: input.userAddress, kycStatus, kycUrl: kyc.kycUrl }
      return response
    })

    return { send, verify } as const
  })
}) {
  static readonly Default = Layer.effect(this, this.make)
}
