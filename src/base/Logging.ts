import { Config, ConfigError, Either, Layer, Logger, LogLevel } from "effect"

/** Effect's levels, least to most severe (all … off). */
const LEVELS = [...LogLevel.allLevels].sort((a, b) => a.ordinal - b.ordinal)
const NAMES = LEVELS.map((level) => level.label.toLowerCase())

/** LOG_LEVEL (default info): one of Effect's level labels, in any case; anything else names the variable and the choices. */
export const LogLevelConfig = Config.string("LOG_LEVEL").pipe(
  Config.withDefault("info"),
  Config.mapOrFail((raw) => {
    const level = LEVELS.find((candidate) => candidate.label.toLowerCase() === raw.trim().toLowerCase())
    return level === undefined
      ? Either.left(
        ConfigError.InvalidData(["LOG_LEVEL"], `must be one of ${NAMES.join(", ")} (got "${raw.slice(0, 40)}")`)
      )
      : Either.right(level)
  })
)

/** Structured JSON logs on stdout at `level`. */
export const loggingLayer = (level: LogLevel.LogLevel) => Layer.merge(Logger.json, Logger.minimumLogLevel(level))
