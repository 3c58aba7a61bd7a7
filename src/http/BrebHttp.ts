import { HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import {
  CurrentIntegration,
  IntegrationsApi,
  type Payout,
  type PayoutList,
  type Quote
} from "@cop-integrations/contracts"
import { Effect } from "effect"
import { DestinationPreviews } from "../destinations/DestinationPreviews.ts"
import { CustomerKyc } from "../kyc/CustomerKyc.ts"
import { OtpService } from "../kyc/OtpService.ts"
import { PayoutCancel } from "../payouts/PayoutCancel.ts"
import { PayoutConfirm } from "../payouts/PayoutConfirm.ts"
import { PayoutService } from "../payouts/PayoutService.ts"
import { QuoteService } from "../quotes/QuoteService.ts"
import { answerConflicts } from "./Conflicts.ts"
import { answerCreated } from "./CreatedAnswer.ts"

/**
 * A quote, a payout or a page of payouts answered as the service built it: already the contract's encoding, so not
 * encoded again through the contract's checks (about 7 % of a GET of one payout's CPU; for a page of 500 as much as
 * the rest of the request).
 * test/payouts/payout-answer-encoding.test.ts and test/quotes/quote.test.ts hold what is built to the contract.
 */
const answerAsBuilt = (value: Quote | Payout | PayoutList) => HttpServerResponse.jsonUnsafe(value)

export const BrebHttpLive = HttpApiBuilder.group(IntegrationsApi, "breb", (handlers) =>
  Effect.gen(function*() {
    const quotes = yield* QuoteService
    const otp = yield* OtpService
    const kyc = yield* CustomerKyc
    const payouts = yield* PayoutService
    const confirms = yield* PayoutConfirm
    const cancels = yield* PayoutCancel
    const previews = yield* DestinationPreviews

    return handlers
      .handle("quote", ({ query }) =>
        Effect.flatMap(CurrentIntegration, ({ integrationId }) =>
          quotes.quote({
            integrationId,
            destinationCop: query.destinationCop,
            fromToken: query.fromToken ?? "USDC"
          }).pipe(answerConflicts, Effect.map(answerAsBuilt))))
      .handle("sendOtp", ({ payload }) =>
        Effect.flatMap(CurrentIntegration, ({ integrationId }) =>
          otp.send({ integrationId, ...payload })))
      .handle("verifyOtp", ({ payload }) =>
        Effect.flatMap(CurrentIntegration, ({ integrationId }) =>
          otp.verify({ integrationId, ...payload })))
      .handle("getKycCustomer", ({ params }) =>
        Effect.flatMap(CurrentIntegration, ({ integrationId }) =>
          kyc.read(integrationId, params.userAddress)))
      .handle("previewDestination", ({ payload }) =>
        Effect.flatMap(CurrentIntegration, ({ integrationId }) =>
          previews.preview(integrationId, payload)))
      .handle("createPayout", ({ headers, payload }) =>
        CurrentIntegration.pipe(
          Effect.flatMap(({ integrationId }) =>
            payouts.create({ integrationId, request: payload, idempotencyKey: headers["idempotency-key"] }).pipe(
              answerConflicts
            )
          ),
          Effect.map(answerCreated)
        ))
      .handle("getPayout", ({ params }) =>
        Effect.flatMap(CurrentIntegration, ({ integrationId }) =>
          Effect.map(payouts.get(integrationId, params.payoutId), answerAsBuilt)))
      .handle("confirmPayout", ({ params, payload }) =>
        Effect.flatMap(CurrentIntegration, ({ integrationId }) =>
          confirms.confirm({ integrationId, payoutId: params.payoutId, request: payload }).pipe(
            answerConflicts,
            Effect.map(answerAsBuilt)
          )))
      .handle("cancelPayout", ({ params }) =>
        Effect.flatMap(CurrentIntegration, ({ integrationId }) =>
          cancels.cancel(integrationId, params.payoutId).pipe(answerConflicts, Effect.map(answerAsBuilt))))
      // Rows are decoded once, from the database, and the page the presenter builds from them is answered as built.
      .handle("listPayouts", ({ query }) =>
        Effect.flatMap(CurrentIntegration, ({ integrationId }) =>
          payouts.list({
            integrationId,
            createdFrom: query.createdFrom,
            createdTo: query.createdTo,
            status: query.status,
            txHash: query.txHash,
            breBKeyLast4: query.breBKeyLast4,
            limit: query.limit,
            cursor: query.cursor
          }).pipe(Effect.map(answerAsBuilt))))
  }))
