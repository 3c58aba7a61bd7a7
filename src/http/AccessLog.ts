import type { HttpServerResponse } from "@effect/platform"
import { Cause, Effect, FiberRef, HashMap, List, LogLevel } from "effect"

export interface AccessEntry {
  readonly requestId: string
  readonly method: string
  readonly path: string
  readonly status: number
  readonly durationMs: number
  /** The authenticated integration, when the request got that far. */
  readonly integrationId: string | undefined
  /** An ErrorBody's `errorCode` (e.g. needs_kyc). */
  readonly errorCode: string | undefined
}

/**
 * The access line of a request ("request", INFO, the entry as annotations), handed straight to the fiber's loggers:
 * the same line `Effect.logInfo(...).pipe(Effect.annotateLogs(entry))` would give, without the two fiber-ref
 * updates and the extra fiber steps per request (the access log as a whole was measured at about a fifth of a
 * health check's throughput: LOG_LEVEL=warn against info). Nothing from the headers is in it, so never a key.
 * Skipped below the minimum log level, as the logger would.
 */
export const logAccess = (entry: AccessEntry) =>
  Effect.withFiberRuntime<void>((fiber) => {
    if (LogLevel.lessThan(LogLevel.Info, fiber.getFiberRef(FiberRef.currentMinimumLogLevel))) return Effect.void
    const options = {
      fiberId: fiber.id(),
      logLevel: LogLevel.Info,
      message: "request",
      cause: Cause.empty,
      context: fiber.getFiberRefs(),
      spans: List.empty(),
      annotations: HashMap.fromIterable(Object.entries(entry).filter(([, value]) => value !== undefined)),
      date: new Date()
    }
    for (const logger of fiber.getFiberRef(FiberRef.currentLoggers)) logger.log(options)
    return Effect.void
  })

const decoder = new TextDecoder()

/** The `errorCode` of an ErrorBody answer (409s and the like), for the access line; undefined for any other answer. */
export const errorCodeOf = (response: HttpServerResponse.HttpServerResponse): string | undefined => {
  if (response.status < 400 || response.body._tag !== "Uint8Array") return undefined
  try {
    const body: unknown = JSON.parse(decoder.decode(response.body.body))
    return typeof body === "object" && body !== null && "errorCode" in body && typeof body.errorCode === "string"
      ? body.errorCode.slice(0, 64)
      : undefined
  } catch {
    return undefined
  }
}
