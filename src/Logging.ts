import { Config, Effect, Layer, Logger, LogLevel } from "effect"

/** Structured JSON logs on stdout; level from LOG_LEVEL (default info). */
export const LoggingLive = Layer.unwrapEffect(
  Effect.map(
    Config.logLevel("LOG_LEVEL").pipe(Config.withDefault(LogLevel.Info)),
    (level) => Layer.merge(Logger.json, Logger.minimumLogLevel(level))
  )
)
