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

const isJsonPrimitive = (value: unknown) =>
  typeof value === "string" || typeof value === "number" || typeof value === "boolean"

/**
 * `jsonLogger`'s line for the common entry (one string message, no cause, annotations of strings, numbers and
 * booleans, which JSON writes as they are), with one plain `JSON.stringify` and no intermediate objects; undefined for
 * any other entry, which `jsonLogger` formats. Every request's access line is such an entry.
 */
export const plainJsonLine = (options: Logger.Options<unknown>): string | undefined => {
  const { cause, date, fiber, logLevel, message } = options
  const text: unknown = Array.isArray(message) ? (message.length === 1 ? message[0] : undefined) : message
  if (typeof text !== "string" || cause.reasons.length > 0) return undefined
  const annotations = fiber.getRef(References.CurrentLogAnnotations)
  for (const key of Object.keys(annotations)) if (!isJsonPrimitive(annotations[key])) return undefined
  const spans: Record<string, number> = {}
  const now = date.getTime()
  for (const [label, startedAt] of fiber.getRef(References.CurrentLogSpans)) {
    if (label === "__proto__") return undefined
    spans[label] = now - startedAt
  }
  return JSON.stringify({
    message: text,
    logLevel: logLevel.toUpperCase(),
    timestamp: date.toISOString(),
    annotations,
    spans,
    fiberId: `#${fiber.id}`
  })
}

/**
 * Stdout, one write per turn of the event loop: the lines logged while it runs (under load, several requests' access
 * lines) are written together after it, in order. A write to stdout is a system call (synchronous for files and pipes),
 * which cost more than anything else about a logged request. Whatever is pending is written when the process exits.
 */
const stdoutLines = (() => {
  let pending = ""
  let scheduled = false
  const flush = () => {
    scheduled = false
    if (pending === "") return
    const lines = pending
    pending = ""
    process.stdout.write(lines)
  }
  process.once("exit", flush)
  return (line: string) => {
    pending += line + "\n"
    if (scheduled) return
    scheduled = true
    setImmediate(flush)
  }
})()

/** `jsonLogger`'s lines on stdout. */
export const stdoutJsonLogger: Logger.Logger<unknown, void> = Logger.make((options) => {
  stdoutLines(plainJsonLine(options) ?? jsonLogger.log(options))
})

/** Structured JSON logs on stdout at `level` (the tracer's logger kept, as before). */
export const loggingLayer = (level: LogLevel.LogLevel) =>
  Layer.merge(
    Logger.layer([stdoutJsonLogger, Logger.tracerLogger]),
    Layer.succeed(References.MinimumLogLevel, level)
  )
