/**
 * The live `Market`: open or closed by the configured market hours (./MarketHours.ts) at the Effect
 * Clock's current time, so tests drive it with the TestClock; closed, it says when it opens again. It is never
 * `Moving`.
 */
import { Clock, Effect, Layer } from "effect"
import { Market, MarketState } from "./Market.ts"
import { isMarketOpen, type MarketHours, nextOpening } from "./MarketHours.ts"

export const MarketLive = (hours: MarketHours): Layer.Layer<Market> =>
  Layer.succeed(
    Market,
    Market.of({
      state: Effect.map(Clock.currentTimeMillis, (millis) => {
        const at = new Date(millis)
        return isMarketOpen(at, hours)
          ? MarketState.Open()
          : MarketState.Closed({ reopensAt: nextOpening(at, hours) })
      })
    })
  )
