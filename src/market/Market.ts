import { Context, Data, type Effect } from "effect"

/** The USD/COP spot market as pricing sees it now. */
export type MarketState = Data.TaggedEnum<{
  /** Open: a price taken now stands. */
  Open: Record<never, never>
  /**
   * Closed: our own `mercado_cerrado` policy (Bre-B itself never closes); `reopensAt` when the next opening is known
   * (a partner is told to retry then: `Retry-After`).
   */
  Closed: { readonly reopensAt: Date | undefined }
  /**
   * Open, but moving: a payout's price no longer stands and it is priced again (409 requote, `reason` its message);
   * a quote is a fresh price and goes on. The live market never says so (the provider's rates are indicative and it
   * holds no price); the mock's `requote` scenario does.
   */
  Moving: { readonly reason: string }
}>
export const MarketState = Data.taggedEnum<MarketState>()

/** The USD/COP spot market: whether a price can be taken now. */
export class Market extends Context.Service<Market, {
  readonly state: Effect.Effect<MarketState>
}>()("Market") {}
