import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { CurrentIntegration, IntegrationsApi } from "@cop-integrations/contracts"
import { Effect } from "effect"
import { OtpService } from "../kyc/OtpService.ts"
import { PayoutConfirm } from "../payouts/PayoutConfirm.ts"
import { PayoutService } from "../payouts/PayoutService.ts"
import { QuoteService } from "../quotes/QuoteService.ts"

export const BrebHttpLive = HttpApiBuilder.group(IntegrationsApi, "breb", (handlers) =>
  Effect.gen(function*() {
    const quotes = yield* QuoteService
    const otp = yield* OtpService
    const payouts = yield* PayoutService
    const confirms = yield* PayoutConfirm

    return handlers
      .handle("quote", ({ urlParams }) =>
        Effect.flatMap(CurrentIntegration, ({ integrationId }) =>
          quotes.quote({
            integrationId,
            destinationCop: urlParams.destinationCop,
            fromToken: urlParams.fromToken ?? "USDC"
          })))
      .handle("sendOtp", ({ payload }) =>
        Effect.flatMap(CurrentIntegration, ({ integrationId }) =>
          otp.send({ integrationId, ...payload })))
      .handle("verifyOtp", ({ payload }) =>
        Effect.flatMap(CurrentIntegration, ({ integrationId }) =>
          otp.verify({ integrationId, ...payload })))
      .handle("createPayout", ({ headers, payload }) =>
        CurrentIntegration.pipe(
          Effect.flatMap(({ integrationId }) =>
            payouts.create({ integrationId, request: payload, idempotencyKey: headers["idempotency-key"] })
          ),
          // The stored body is returned as is, so a replay is byte-for-byte the first response.
          Effect.map((outcome) =>
            HttpServerResponse.unsafeJson(outcome.body, {
              status: outcome.status,
              headers: outcome.replayed ? { "idempotent-replayed": "true" } : {}
            })
          )
        ))
      .handle("getPayout", ({ path }) =>
        Effect.flatMap(CurrentIntegration, ({ integrationId }) =>
          payouts.get(integrationId, path.payoutId)))
      .handle("confirmPayout", ({ path, payload }) =>
        Effect.flatMap(CurrentIntegration, ({ integrationId }) =>
          confirms.confirm({ integrationId, payoutId: path.payoutId, request: payload })))
      // Rows are decoded once, from the database; the page the presenter builds from them is answered as it is
      // (encoding up to 500 payouts again through the contract's checks cost as much as the rest of the request).
      .handle("listPayouts", ({ urlParams }) =>
        Effect.flatMap(CurrentIntegration, ({ integrationId }) =>
          payouts.list({
            integrationId,
            createdFrom: urlParams.createdFrom,
            limit: urlParams.limit,
            cursor: urlParams.cursor
          }).pipe(Effect.map((page) =>
            HttpServerResponse.unsafeJson(page)
          ))))
  }))
