import { Clock, Effect, Layer, Option } from "effect"
import { currentMockScenario } from "../base/MockScenario.ts"
import { Market, MarketState } from "./Market.ts"
import { defaultMarketHours, nextOpening } from "./MarketHours.ts"

const open: MarketState = MarketState.Open()
const moving: MarketState = MarketState.Moving({ reason: "the quote is no longer valid (mock scenario): quote again" })

/**
 * Mock mode's market is always open, unless the request asks for the `market_closed` scenario (closed, as though it
 * had just closed: it opens again when the live default hours next open a session, so a sandbox's `mercado_cerrado`
 * carries the `Retry-After` a live one would) or the `requote` scenario (moving: a payout is priced again, a quote
 * goes on).
 */
export const MarketMock = Layer.succeed(
  Market,
  Market.of({
    state: Effect.flatMap(
      currentMockScenario,
      Option.match({
        onNone: () => Effect.succeed(open),
        onSome: (scenario) =>
          scenario === "market_closed"
            ? Effect.map(
              Clock.currentTimeMillis,
              (millis): MarketState =>
                MarketState.Closed({ reopensAt: nextOpening(new Date(millis), defaultMarketHours) })
            )
            : Effect.succeed(scenario === "requote" ? moving : open)
      })
    )
  })
)
