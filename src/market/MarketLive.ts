/**
 * The live `Market`: open or closed by the configured market hours (./MarketHours.ts) at the Effect
 * Clock's current time, so tests drive it with the TestClock.
 */
import { Clock, Effect, Layer } from "effect"
import { Market } from "./Market.ts"
import { isMarketOpen, type MarketHours, marketStatus, type MarketStatus } from "./MarketHours.ts"

/** Open or closed now (by the Clock), and why closed: for logs and diagnostics. */
export const currentMarketStatus = (hours: MarketHours): Effect.Effect<MarketStatus> =>
  Effect.map(Clock.currentTimeMillis, (millis) => marketStatus(new Date(millis), hours))

export const MarketLive = (hours: MarketHours): Layer.Layer<Market> =>
  Layer.succeed(
    Market,
    Market.of({ isOpen: Effect.map(Clock.currentTimeMillis, (millis) => isMarketOpen(new Date(millis), hours)) })
  )
