/**
 * The live payout provider: Bridge's REST API (notes/provider.md), every request and answer shape in this file.
 * `Api-Key` on every call, an `Idempotency-Key` on every POST (derived by the caller from what it stored), bounded
 * retries with backoff on 5xx, 429, timeouts and transport errors (each retry with the same key and body; the whole
 * call, retries included, within the configured timeout), and
 * every answer decoded with Schema: an answer we cannot read is `ProviderBadResponse` (502), logged without secrets.
 */
import { Duration, Effect, Layer, Option, Redacted, Schema } from "effect"
import {
  FetchHttpClient,
  HttpClient,
  type HttpClientError,
  HttpClientRequest,
  type HttpClientResponse
} from "effect/http"
import { boundedTries } from "../../base/BoundedCall.ts"
import { configError } from "../../base/StartupFailure.ts"
import { getAddress } from "viem"
import {
  type ExternalAccount,
  PayoutProvider,
  ProviderBadResponse,
  ProviderUnavailable,
  type ProviderTransfer
} from "../PayoutProvider.ts"
import { customerKycStatusOf, kycStatusOf } from "./KycStatuses.ts"
import { CryptoReturnPolicies, returnPolicyProblem } from "./ReturnPolicy.ts"
import { progressOfTransfer, TransferObject } from "./TransferObject.ts"

export interface BridgeOptions {
  /** Base URL including the version segment, e.g. `https://api.bridge.xyz/v0`. */
  readonly baseUrl: string
  readonly apiKey: Redacted.Redacted<string>
  /** Bridge's `payment_rail` of the deployment's chain (e.g. `celo`, `base`). */
  readonly sourceRail: string
  /** Bridge's `payment_rail` for Bre-B payouts. */
  readonly destinationRail: string
  /** The limit of a whole call: its tries and the backoff between them. */
  readonly timeout: Duration.Input
  /** Retries after the first attempt, for failures that may pass, within `timeout`. */
  readonly retries: number
  readonly retryBase?: Duration.Input
}

// ---------------------------------------------------------------------------------------------------------
// Bridge's answers (only the fields we use; others are tolerated)

const DecimalString = Schema.String.check(Schema.isPattern(/^[0-9]+(\.[0-9]+)?$/))

const ExchangeRates = Schema.Struct({
  midmarket_rate: DecimalString.pipe(Schema.decodeTo(Schema.BigDecimalFromString)),
  sell_rate: DecimalString.pipe(Schema.decodeTo(Schema.BigDecimalFromString))
})

const KycLinkAnswer = Schema.Struct({
  id: Schema.String,
  customer_id: Schema.String,
  kyc_link: Schema.NullishOr(Schema.String),
  kyc_status: Schema.String
})

/** The customer object (`GET /customers/{id}`): its `kyc_status`, or at least its overall `status`. */
const CustomerAnswer = Schema.Union([
  Schema.Struct({ id: Schema.String, kyc_status: Schema.String, status: Schema.optional(Schema.String) }),
  Schema.Struct({ id: Schema.String, status: Schema.String })
])

const ExternalAccountAnswer = Schema.Struct({
  id: Schema.String,
  account_owner_name: Schema.String,
  bank_name: Schema.NullishOr(Schema.String),
  breb: Schema.optional(Schema.NullishOr(Schema.Struct({ document_last_4: Schema.NullishOr(Schema.String) })))
})

const Address = Schema.String.check(Schema.isPattern(/^0x[0-9a-fA-F]{40}$/))

const TransferAnswer = Schema.Struct({
  id: Schema.String,
  state: Schema.String,
  source_deposit_instructions: Schema.Struct({
    payment_rail: Schema.String,
    currency: Schema.String,
    amount: DecimalString,
    to_address: Address
  })
})

const BridgeError = Schema.Struct({ code: Schema.String, message: Schema.optional(Schema.String) })

/** Bridge's error code for an Idempotency-Key sent again with another body. */
const IDEMPOTENCY_KEY_REUSED = "idempotency_key_reused"

/** The error code of Bridge's external-account answer when the Bre-B directory names another holder. */
export const OWNER_NAME_MISMATCH = "account_owner_name_mismatch"

// ---------------------------------------------------------------------------------------------------------

type Answer = { readonly status: number; readonly body: unknown }

const isRetryable = (status: number) => status >= 500 || status === 429 || status === 408

/** Why a request got no answer, in the words of the log and the 503 ("unreachable", "Decode", …). */
const failureReason = (error: HttpClientError.HttpClientError) =>
  error.reason._tag === "TransportError" ? "unreachable" : error.reason._tag.replace(/Error$/, "")

/** The client: the payout provider, and the developer's crypto return policies (checked at start-up). */
const makeBridge = (options: BridgeOptions) =>
  Effect.gen(function*() {
    const client = (yield* HttpClient.HttpClient).pipe(
      HttpClient.mapRequest((request) =>
        request.pipe(
          HttpClientRequest.prependUrl(options.baseUrl.replace(/\/+$/, "")),
          HttpClientRequest.setHeader("Api-Key", Redacted.value(options.apiKey)),
          HttpClientRequest.acceptJson
        )
      )
    )
    const readBody = (response: HttpClientResponse.HttpClientResponse) =>
      response.json.pipe(Effect.catch(() => Effect.succeed<unknown>(undefined)))

    /** One try, cut at `limit`; 5xx/429/408, no answer in time and transport errors are ProviderUnavailable. */
    const tryOnce = (what: string, request: HttpClientRequest.HttpClientRequest, limit: Duration.Duration) =>
      client.execute(request).pipe(
        Effect.flatMap((response) => Effect.map(readBody(response), (body) => ({ status: response.status, body }))),
        Effect.timeoutOrElse({
          duration: limit,
          orElse: () =>
            Effect.fail(new ProviderUnavailable({ reason: `${what}: no answer within ${Duration.format(limit)}` }))
        }),
        Effect.catchTag("HttpClientError", (error) =>
          Effect.fail(new ProviderUnavailable({ reason: `${what}: ${failureReason(error)}` }))),
        Effect.filterOrFail(
          (answer) =>
            !isRetryable(answer.status),
          (answer) => new ProviderUnavailable({ reason: `${what}: HTTP ${answer.status}` })
        )
      )

    /** A whole call within `options.timeout`, its retries included (see boundedTries). */
    const send = (
      what: string,
      request: HttpClientRequest.HttpClientRequest
    ): Effect.Effect<Answer, ProviderUnavailable> =>
      boundedTries({
        timeout: options.timeout,
        retries: options.retries,
        ...(options.retryBase === undefined ? {} : { retryBase: options.retryBase }),
        tryOnce: (limit) => tryOnce(what, request, limit),
        retryable: (error) => error._tag === "ProviderUnavailable",
        outOfTime: () =>
          new ProviderUnavailable({
            reason: `${what}: no answer within ${
              Duration.format(Duration.fromInputUnsafe(options.timeout))
            }, retries included`
          })
      }).pipe(
        Effect.tapError((error) =>
          Effect.logWarning("payout provider unavailable").pipe(Effect.annotateLogs({ reason: error.reason }))
        )
      )

    const badResponse = (what: string, detail: string, refused = false) =>
      Effect.andThen(
        Effect.logError("payout provider answered unexpectedly").pipe(Effect.annotateLogs({ call: what, detail })),
        Effect.fail(new ProviderBadResponse({ reason: `${what}: ${detail}`, refused }))
      )

    /** A 2xx answer decoded with `schema`; anything else is a bad response. */
    const decoded = <A>(what: string, schema: Schema.ConstraintDecoder<A>, answer: Answer) =>
      answer.status >= 200 && answer.status < 300
        ? Schema.decodeUnknownEffect(schema)(answer.body).pipe(
          Effect.catchTag("SchemaError", (error) => badResponse(what, error.message))
        )
        : badResponse(
          what,
          `HTTP ${answer.status} ${errorCode(answer.body).pipe(Option.getOrElse(() => ""))}`.trim(),
          isRefusal(answer)
        )

    const errorCode = (body: unknown) =>
      Option.map(Schema.decodeUnknownOption(BridgeError)(body), (error) => error.code)

    /**
     * A 4xx answer refuses the request: the provider made nothing for it. Not a 409 (a conflict may mean the same key
     * is still being worked on) nor `idempotency_key_reused` (something exists under that key).
     */
    const isRefusal = (answer: Answer) =>
      answer.status >= 400 && answer.status < 500 && answer.status !== 409 &&
      !Option.contains(errorCode(answer.body), IDEMPOTENCY_KEY_REUSED)

    const post = (what: string, path: string, idempotencyKey: string, body: unknown) =>
      send(
        what,
        HttpClientRequest.post(path).pipe(
          HttpClientRequest.setHeader("Idempotency-Key", idempotencyKey),
          HttpClientRequest.bodyJsonUnsafe(body)
        )
      )

    const usdCopRates = Effect.gen(function*() {
      const answer = yield* send(
        "exchange rates",
        HttpClientRequest.get("/exchange_rates", { urlParams: { from: "usd", to: "cop" } })
      )
      const rates = yield* decoded("exchange rates", ExchangeRates, answer)
      return { sellRate: rates.sell_rate, midRate: rates.midmarket_rate }
    })

    const createKycLink = (input: { readonly idempotencyKey: string; readonly email: string }) =>
      Effect.gen(function*() {
        // We do not collect the user's legal name before KYC; the hosted KYC flow asks for it.
        const fullName = input.email.split("@")[0] || input.email
        const answer = yield* post("kyc link", "/kyc_links", input.idempotencyKey, {
          full_name: fullName,
          email: input.email,
          type: "individual"
        })
        const link = yield* decoded("kyc link", KycLinkAnswer, answer)
        return { customerId: link.customer_id, kycUrl: link.kyc_link ?? null, kycStatus: kycStatusOf(link.kyc_status) }
      })

    const createExternalAccount = (input: {
      readonly idempotencyKey: string
      readonly customerId: string | null
      readonly breBKey: string
      readonly accountOwnerName: string
    }) =>
      Effect.gen(function*() {
        if (input.customerId === null) {
          return yield* badResponse("external account", "no provider customer for this user")
        }
        const answer = yield* post(
          "external account",
          `/customers/${encodeURIComponent(input.customerId)}/external_accounts`,
          input.idempotencyKey,
          {
            currency: "cop",
            account_owner_name: input.accountOwnerName.trim(),
            account_owner_type: "individual",
            breb: { key: input.breBKey }
          }
        )
        if (
          answer.status >= 400 && answer.status < 500 && Option.contains(errorCode(answer.body), OWNER_NAME_MISMATCH)
        ) {
          return { _tag: "OwnerMismatch" } satisfies ExternalAccount
        }
        const account = yield* decoded("external account", ExternalAccountAnswer, answer)
        return {
          _tag: "Verified",
          externalAccountId: account.id,
          accountOwnerName: account.account_owner_name,
          bankName: account.bank_name ?? null,
          documentLast4: account.breb?.document_last_4 ?? null
        } satisfies ExternalAccount
      })

    const createTransfer = (input: {
      readonly idempotencyKey: string
      readonly payoutId: string
      readonly customerId: string | null
      readonly amount: string
      readonly userAddress: string
      readonly externalAccountId: string
    }) =>
      Effect.gen(function*() {
        // Nothing is sent: the key may be freed (refused), as for an answer that created nothing.
        if (input.customerId === null) return yield* badResponse("transfer", "no provider customer for this user", true)
        const answer = yield* post("transfer", "/transfers", input.idempotencyKey, {
          amount: input.amount,
          on_behalf_of: input.customerId,
          developer_fee_percent: "0.5",
          source: { payment_rail: options.sourceRail, currency: "usdc", from_address: input.userAddress },
          destination: {
            payment_rail: options.destinationRail,
            currency: "cop",
            external_account_id: input.externalAccountId
          },
          client_reference_id: input.payoutId
        })
        const transfer = yield* decoded("transfer", TransferAnswer, answer)
        const instructions = transfer.source_deposit_instructions
        return {
          transferId: transfer.id,
          chain: instructions.payment_rail,
          currency: instructions.currency,
          depositAddress: getAddress(instructions.to_address),
          depositAmount: instructions.amount
        } satisfies ProviderTransfer
      })

    const getCustomerKyc = (providerCustomerId: string) =>
      Effect.gen(function*() {
        const answer = yield* send(
          "customer",
          HttpClientRequest.get(`/customers/${encodeURIComponent(providerCustomerId)}`)
        )
        return customerKycStatusOf(yield* decoded("customer", CustomerAnswer, answer))
      })

    const getTransfer = (transferId: string) =>
      Effect.gen(function*() {
        const answer = yield* send(
          "transfer status",
          HttpClientRequest.get(`/transfers/${encodeURIComponent(transferId)}`)
        )
        return yield* progressOfTransfer(yield* decoded("transfer status", TransferObject, answer))
      })

    // Bridge deletes a transfer still awaiting its funds (its state becomes `canceled`); it refuses one that has them.
    const cancelTransfer = (transferId: string) =>
      Effect.gen(function*() {
        const answer = yield* send(
          "transfer cancel",
          HttpClientRequest.delete(`/transfers/${encodeURIComponent(transferId)}`)
        )
        yield* decoded("transfer cancel", TransferObject, answer)
      })

    const cryptoReturnPolicies = Effect.flatMap(
      send("crypto return policies", HttpClientRequest.get("/crypto_return_policies")),
      (answer) => decoded("crypto return policies", CryptoReturnPolicies, answer)
    )

    const provider = PayoutProvider.of({
      destinationsPerCustomer: true,
      usdCopRates,
      createKycLink,
      createExternalAccount,
      createTransfer,
      cancelTransfer,
      getCustomerKyc,
      getTransfer
    })
    return { provider, cryptoReturnPolicies } as const
  })

export const makeBridgeProvider = (options: BridgeOptions) =>
  Effect.map(makeBridge(options), (bridge) => bridge.provider)

export const BridgeProvider = (options: BridgeOptions) =>
  Layer.effect(PayoutProvider, makeBridgeProvider(options)).pipe(Layer.provide(FetchHttpClient.layer))

/**
 * Live start-up check (issue #29): refunds go back to the wallet that sent the deposit. Refuses to start unless the
 * developer has a `refund_to_sender` crypto return policy and no `static_address` one (ReturnPolicy.ts), or when
 * Bridge cannot tell.
 */
export const BridgeReturnPolicyCheck = (options: BridgeOptions) =>
  Layer.effectDiscard(
    Effect.gen(function*() {
      const bridge = yield* makeBridge(options)
      const answer = yield* bridge.cryptoReturnPolicies.pipe(
        Effect.mapError((error) =>
          configError(
            ["PROVIDER_API_URL"],
            `the provider's crypto return policies could not be read (GET /crypto_return_policies): ${error.reason}`
          )
        )
      )
      const problem = returnPolicyProblem(answer.data)
      if (Option.isSome(problem)) return yield* Effect.fail(configError(["PROVIDER_API_KEY"], problem.value))
    })
  ).pipe(Layer.provide(FetchHttpClient.layer))
