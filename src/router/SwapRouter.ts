import { Context, Data, type Effect, type Option } from "effect"
import type { TokenInfo } from "../chain/Tokens.ts"

/** The router/aggregator could not be reached or answered 5xx/timeouts: 503, retry later. */
export class SwapRouterUnavailable extends Data.TaggedError("SwapRouterUnavailable")<{ readonly reason: string }> {}
/** It answered something we cannot read: 502. */
export class SwapRouterBadResponse extends Data.TaggedError("SwapRouterBadResponse")<{ readonly reason: string }> {}
/** It has no route for this pair and amount: 409. */
export class NoSwapRoute extends Data.TaggedError("NoSwapRoute")<{ readonly reason: string }> {}

export type SwapRouterFailure = SwapRouterUnavailable | SwapRouterBadResponse | NoSwapRoute

export interface SwapQuoteRequest {
  readonly sellToken: TokenInfo
  readonly buyToken: TokenInfo
  /** Base units of sellToken. */
  readonly sellAmount: bigint
  /** Who sends the transaction and pays sellAmount. */
  readonly taker: `0x${string}`
  /** Who receives the output: the user for a swap, the provider's deposit address for a payout funded from COPm. */
  readonly recipient: `0x${string}`
  readonly slippageBps: number
}

export interface SwapQuote {
  /** Base units of buyToken the route is expected to deliver. */
  readonly buyAmount: bigint
  /** The least the transaction delivers (it reverts below): buyAmount less the slippage, rounded down. */
  readonly minBuyAmount: bigint
  /** The spender the user approves for sellAmount (the router, or the aggregator's allowance holder). */
  readonly allowanceTarget: `0x${string}`
  readonly transaction: { readonly to: `0x${string}`; readonly data: `0x${string}`; readonly value: bigint }
}

/** What a route's least sellAmount is asked for: the sellAmount is the answer, the least minBuyAmount is given. */
export interface LeastSellRequest extends Omit<SwapQuoteRequest, "sellAmount"> {
  /** Base units of buyToken the swap must deliver at least (its minBuyAmount, slippage taken). */
  readonly minBuyAmount: bigint
}

/** Swap routes: mock (deterministic rate from config, no network) or live (a 0x Swap API v2-compatible aggregator). */
export class SwapRouter extends Context.Service<SwapRouter, {
  readonly quote: (request: SwapQuoteRequest) => Effect.Effect<SwapQuote, SwapRouterFailure>
  /**
   * The least sellAmount whose quote's minBuyAmount reaches the given one, when the route can say so exactly (the
   * mock's formula inverts); none when it cannot (an aggregator quotes only a given sellAmount, so the least is
   * known only by asking).
   */
  readonly leastSellAmount: (request: LeastSellRequest) => Effect.Effect<Option.Option<bigint>>
}>()("SwapRouter") {}
