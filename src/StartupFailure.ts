import { SqlError } from "@effect/sql"
import { Cause, ConfigError, Option } from "effect"

const causeMessage = (error: SqlError.SqlError) =>
  error.cause instanceof Error && error.cause.message !== "" ? `: ${error.cause.message}` : ""

/**
 * The one line an operator sees when the service cannot start because of a configuration or database
 * mistake (no stack trace, no secret); none for anything else, which is logged with its cause.
 */
export const startupFailureLine = (cause: Cause.Cause<unknown>): Option.Option<string> => {
  const failure = Cause.failureOption(cause)
  if (Option.isSome(failure) && ConfigError.isConfigError(failure.value)) {
    return Option.some(`configuration error: ${String(failure.value).replace(/^\((.*)\)$/s, "$1")}`)
  }
  if (Option.isSome(failure) && failure.value instanceof SqlError.SqlError) {
    return Option.some(`database error: ${failure.value.message}${causeMessage(failure.value)}`)
  }
  return Option.none()
}
