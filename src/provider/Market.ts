import { Context, Effect, Layer } from "effect"
import { isScenario } from "../MockScenario.ts"

/** Whether the USD/COP spot market is open (our own `mercado_cerrado` policy; Bre-B itself never closes). */
export class Market extends Context.Tag("Market")<Market, {
  readonly isOpen: Effect.Effect<boolean>
}>() {}

/** Mock mode is always open unless the request asks for the `market_closed` scenario. */
export const MarketMock = Layer.succeed(
  Market,
  Market.of({ isOpen: Effect.map(isScenario("market_closed"), (closed) => !closed) })
)
