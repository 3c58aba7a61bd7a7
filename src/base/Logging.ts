import { Config, Effect, Formatter, Layer, Logger, type LogLevel, References } from "effect"
import { configError } from "./StartupFailure.ts"

/** LOG_LEVEL's names, least to most severe (v3's labels, which the variable has always taken), and Effect's levels. */
const LEVELS: ReadonlyArray<readonly [name: string, level: LogLevel.LogLevel]> = [
  ["all", "All"],
  ["trace", "Trace"],
  ["debug", "Debug"],
  ["info", "Info"],
  ["warn", "Warn"],
  ["error", "Error"],
  ["fatal", "Fatal"],
  ["off", "None"]
]
const NAMES = LEVELS.map(([name]) => name)

/** LOG_LEVEL (default info): one of the level names, in any case; anything else names the variable and the choices. */
export const LogLevelConfig = Config.String("LOG_LEVEL").pipe(
  Config.withDefault("info"),
  Config.mapEffect((raw) => {
    const found = LEVELS.find(([name]) => name === raw.trim().toLowerCase())
    return found === undefined
      ? Effect.fail(configError(["LOG_LEVEL"], `must be one of ${NAMES.join(", ")} (got "${raw.slice(0, 40)}")`))
      : Effect.succeed(found[1])
  })
)

/**
 * One JSON line per log entry, in the shape the service has always written (`logLevel`, where v4's own JSON logger
 * writes `level`): `{ message, logLevel, timestamp, cause?, annotations, spans, fiberId }`.
 */
export const jsonLogger: Logger.Logger<unknown, string> = Logger.map(
  Logger.formatStructured,
  ({ annotations, cause, fiberId, level, message, spans, timestamp }) =>
    Formatter.formatJson({ message, logLevel: level, timestamp, cause, annotations, spans, fiberId })
)

/** Structured JSON logs on stdout at `level` (the tracer's logger kept, as before). */
export const loggingLayer = (level: LogLevel.LogLevel) =>
  Layer.merge(
    Logger.layer([Logger.withConsoleLog(jsonLogger), Logger.tracerLogger]),
    Layer.succeed(References.MinimumLogLevel, level)
  )
