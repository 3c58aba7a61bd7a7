import { Effect, Layer, Option } from "effect"
import { currentMockScenario, type MockScenario } from "../base/MockScenario.ts"
import { Market, MarketState } from "./Market.ts"

const open = MarketState.Open()

/** What the scenarios say of the market; any other request finds it open. */
const byScenario: Partial<Record<MockScenario, MarketState>> = {
  market_closed: MarketState.Closed(),
  requote: MarketState.Moving({ reason: "the quote is no longer valid (mock scenario): quote again" })
}

/**
 * Mock mode's market is always open, unless the request asks for the `market_closed` scenario (closed) or the
 * `requote` scenario (moving: a payout is priced again, a quote goes on).
 */
export const MarketMock = Layer.succeed(
  Market,
  Market.of({
    state: Effect.map(
      currentMockScenario,
      Option.match({ onNone: () => open, onSome: (scenario) => byScenario[scenario] ?? open })
    )
  })
)
