import { Duration, Effect, Layer, Redacted, Schema } from "effect"
import { FetchHttpClient, HttpClient, HttpClientRequest, HttpIncomingMessage } from "effect/http"
import { AppConfig } from "../config/Config.ts"
import { Mailer, MailerUnavailable, maskEmail } from "./Mailer.ts"

const Accepted = Schema.Struct({ id: Schema.String })

/**
 * OTP e-mails through an HTTP e-mail API (Resend's shape: `POST {EMAIL_API_URL}/emails` with a bearer key,
 * answered `{ id }`). Used in either mode once EMAIL_API_KEY is set. Logs carry the masked address and the
 * message id, never the code.
 */
export const MailerHttp = (apiKey: Redacted.Redacted<string>) =>
  Layer.effect(
    Mailer,
    Effect.gen(function*() {
      const config = yield* AppConfig
      const client = (yield* HttpClient.HttpClient).pipe(
        HttpClient.mapRequest(HttpClientRequest.prependUrl(config.emailApiUrl)),
        HttpClient.filterStatusOk
      )
      return Mailer.of({
        sendOtp: ({ to, code }) =>
          HttpClientRequest.post("/emails").pipe(
            HttpClientRequest.bearerToken(Redacted.value(apiKey)),
            HttpClientRequest.bodyJson({
              from: config.emailFrom,
              to: [to],
              subject: `Your verification code: ${code}`,
              text:
                `Your verification code is ${code}. It is valid for 10 minutes. If you did not ask for it, ignore this e-mail.`
            }),
            Effect.flatMap(client.execute),
            Effect.flatMap(HttpIncomingMessage.schemaBodyJson(Accepted)),
            Effect.timeout(Duration.seconds(10)),
            Effect.tap(({ id }) =>
              Effect.logInfo("OTP e-mail sent").pipe(Effect.annotateLogs({ email: maskEmail(to), messageId: id }))
            ),
            Effect.asVoid,
            Effect.catch((error) =>
              Effect.andThen(
                Effect.logWarning("OTP e-mail failed").pipe(
                  Effect.annotateLogs({ email: maskEmail(to), reason: error._tag })
                ),
                Effect.fail(new MailerUnavailable({ reason: error._tag }))
              )
            )
          )
      })
    })
  ).pipe(Layer.provide(FetchHttpClient.layer))
