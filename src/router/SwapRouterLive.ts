/**
 * Live swap routes from a 0x Swap API v2-compatible aggregator (`GET /swap/allowance-holder/quote`, headers
 * `0x-api-key` and `0x-version: v2`). Every answer is decoded with Schema: `liquidityAvailable: false` is no route
 * (409); an answer we cannot read is a bad response (502); 5xx, 429, timeouts and network errors are retried a few
 * times, all within the configured timeout, then unavailable (503).
 */
import { Duration, Effect, Layer, Option, Redacted, Schema } from "effect"
import { FetchHttpClient, HttpClient, HttpClientRequest } from "effect/http"
import { boundedTries } from "../base/BoundedCall.ts"
import { getAddress } from "viem"
import { NoSwapRoute, SwapRouter, SwapRouterBadResponse, SwapRouterUnavailable } from "./SwapRouter.ts"

export interface SwapRouterLiveOptions {
  readonly baseUrl: string
  readonly apiKey: Redacted.Redacted<string>
  readonly chainId: number
  readonly timeout: Duration.Input
  readonly retries: number
}

const Units = Schema.String.check(Schema.isPattern(/^[0-9]{1,78}$/))
const Address = Schema.String.check(Schema.isPattern(/^0x[0-9a-fA-F]{40}$/))
const Hex = Schema.TemplateLiteral(["0x", Schema.String]).check(Schema.isPattern(/^0x([0-9a-fA-F]{2})*$/))

const NoLiquidity = Schema.Struct({ liquidityAvailable: Schema.Literal(false) })

const Quote = Schema.Struct({
  liquidityAvailable: Schema.Literal(true),
  buyAmount: Units,
  minBuyAmount: Units,
  allowanceTarget: Schema.optional(Schema.NullOr(Address)),
  issues: Schema.optional(Schema.NullOr(Schema.Struct({
    allowance: Schema.optional(Schema.NullOr(Schema.Struct({ spender: Address })))
  }))),
  transaction: Schema.Struct({ to: Address, data: Hex, value: Units })
})

const isRetryable = (status: number) => status >= 500 || status === 429 || status === 408

export const makeSwapRouterLive = (options: SwapRouterLiveOptions) =>
  Effect.gen(function*() {
    const client = (yield* HttpClient.HttpClient).pipe(
      HttpClient.mapRequest((request) =>
        request.pipe(
          HttpClientRequest.prependUrl(options.baseUrl.replace(/\/+$/, "")),
          HttpClientRequest.setHeader("0x-api-key", Redacted.value(options.apiKey)),
          HttpClientRequest.setHeader("0x-version", "v2"),
          HttpClientRequest.acceptJson
        )
      )
    )
    const bad = (detail: string) =>
      Effect.andThen(
        Effect.logError("swap router answered unexpectedly").pipe(Effect.annotateLogs({ detail })),
        Effect.fail(new SwapRouterBadResponse({ reason: detail }))
      )

    return SwapRouter.of({
      // 0x v2 quotes a given sellAmount only: the least that buys an amount is not something it can be asked.
      leastSellAmount: () => Effect.succeed(Option.none()),
      quote: (request) =>
        Effect.gen(function*() {
          const get = HttpClientRequest.get("/swap/allowance-holder/quote", {
            urlParams: {
              chainId: String(options.chainId),
              sellToken: request.sellToken.address,
              buyToken: request.buyToken.address,
              sellAmount: String(request.sellAmount),
              taker: request.taker,
              recipient: request.recipient,
              slippageBps: String(request.slippageBps)
            }
          })
          const tryOnce = (limit: Duration.Duration) =>
            client.execute(get).pipe(
              Effect.flatMap((response) =>
                Effect.map(
                  Effect.orElseSucceed(response.json, (): unknown => undefined),
                  (body) => ({ status: response.status, body })
                )
              ),
              Effect.timeoutOrElse({
                duration: limit,
                orElse: () =>
                  Effect.fail(new SwapRouterUnavailable({ reason: `no answer within ${Duration.format(limit)}` }))
              }),
              Effect.catchTag("HttpClientError", (error) =>
                Effect.fail(
                  new SwapRouterUnavailable({
                    reason: error.reason._tag === "TransportError"
                      ? "unreachable"
                      : error.reason._tag.replace(/Error$/, "")
                  })
                )),
              Effect.filterOrFail(
                (answer) => !isRetryable(answer.status),
                (answer) => new SwapRouterUnavailable({ reason: `HTTP ${answer.status}` })
              )
            )
          const answer = yield* boundedTries({
            timeout: options.timeout,
            retries: options.retries,
            tryOnce,
            retryable: (error): boolean => error._tag === "SwapRouterUnavailable",
            outOfTime: () =>
              new SwapRouterUnavailable({
                reason: `no answer within ${
                  Duration.format(Duration.fromInputUnsafe(options.timeout))
                }, retries included`
              })
          })
          if (answer.status < 200 || answer.status >= 300) return yield* bad(`HTTP ${answer.status}`)
          if (Schema.is(NoLiquidity)(answer.body)) {
            return yield* Effect.fail(
              new NoSwapRoute({ reason: "the aggregator has no liquidity for this pair and amount" })
            )
          }
          const quote = yield* Schema.decodeUnknownEffect(Quote)(answer.body).pipe(
            Effect.catchTag("SchemaError", (error) => bad(error.message))
          )
          // With the allowance-holder flow the spender is the transaction's target unless the quote names another.
          const spender = quote.issues?.allowance?.spender ?? quote.allowanceTarget ?? quote.transaction.to
          return {
            buyAmount: BigInt(quote.buyAmount),
            minBuyAmount: BigInt(quote.minBuyAmount),
            allowanceTarget: getAddress(spender),
            transaction: {
              to: getAddress(quote.transaction.to),
              data: quote.transaction.data,
              value: BigInt(quote.transaction.value)
            }
          }
        })
    })
  })

export const SwapRouterLive = (options: SwapRouterLiveOptions) =>
  Layer.effect(SwapRouter, makeSwapRouterLive(options)).pipe(Layer.provide(FetchHttpClient.layer))
