import { Effect, Layer } from "effect"
import { isScenario } from "../base/MockScenario.ts"
import { Market } from "./Market.ts"

/** Mock mode is always open unless the request asks for the `market_closed` scenario. */
export const MarketMock = Layer.succeed(
  Market,
  Market.of({ isOpen: Effect.map(isScenario("market_closed"), (closed) => !closed) })
)
