import { Context, Data, Effect, Layer } from "effect"

export interface OtpEmail {
  readonly to: string
  readonly code: string
}

export class MailerUnavailable extends Data.TaggedError("MailerUnavailable")<{ readonly reason: string }> {}

export class Mailer extends Context.Service<Mailer, {
  readonly sendOtp: (email: OtpEmail) => Effect.Effect<void, MailerUnavailable>
}>()("Mailer") {}

/** Without an e-mail delivery key nothing is sent; the log line never carries the code or the full address. */
export const MailerDisabled = Layer.succeed(
  Mailer,
  Mailer.of({
    sendOtp: ({ to }) =>
      Effect.logDebug("OTP e-mail not sent: no EMAIL_API_KEY configured").pipe(
        Effect.annotateLogs("email", maskEmail(to))
      )
  })
)

export const maskEmail = (email: string): string => {
  const [local = "", domain = ""] = email.split("@")
  return `${local.slice(0, 1)}***@${domain}`
}
