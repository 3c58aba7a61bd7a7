import { Cause, Config, Option, Schema, SchemaIssue } from "effect"
import { HttpServerError } from "effect/http"
import { SqlError } from "effect/sql"

/** Codes a failed connection or listen carries, in words an operator can act on. */
const REASONS: Record<string, string> = {
  ENOTFOUND: "no such host",
  EAI_AGAIN: "the host name could not be resolved",
  ECONNREFUSED: "connection refused",
  ECONNRESET: "connection reset",
  ETIMEDOUT: "timed out",
  EHOSTUNREACH: "host unreachable",
  "28P01": "password authentication failed",
  "28000": "the server refused this user",
  "3D000": "the database does not exist",
  "57P03": "the server is starting up or shutting down"
}

const errorCode = (cause: unknown): string | undefined =>
  typeof cause === "object" && cause !== null && "code" in cause && typeof cause.code === "string"
    ? cause.code
    : undefined

const messageOf = (cause: unknown) => (cause instanceof Error ? cause.message.split("\n")[0] ?? "" : "")

/** "connection refused (ECONNREFUSED)", or the cause's own first line when its code is not a known one. */
const reasonOf = (cause: unknown) => {
  const code = errorCode(cause)
  const known = code === undefined ? undefined : REASONS[code]
  if (known !== undefined) return `${known} (${code})`
  const message = messageOf(cause)
  return message === "" ? "unknown reason" : message
}

/** A configuration error at the variable `path` names (e.g. ["PORT"]) saying `message`. */
export const configError = (path: ReadonlyArray<string>, message: string): Config.ConfigError =>
  new Config.ConfigError(
    new Schema.SchemaError(new SchemaIssue.Pointer(path, new SchemaIssue.InvalidValue({ message })))
  )

const issuesOf = SchemaIssue.makeFormatterStandardSchemaV1()

/** `NAME: what is wrong` for each variable at fault, `; `-separated. */
const describeConfigError = (error: Config.ConfigError): string => {
  if (!Schema.isSchemaError(error.cause)) return `configuration: ${error.cause.message}`
  return issuesOf(error.cause.issue).issues.map(({ message, path }) =>
    `${path === undefined || path.length === 0 ? "configuration" : path.map(String).join(".")}: ${message}`
  ).join("; ")
}

const isConnectFailure = (error: SqlError.SqlError) => error.message.startsWith("PgClient: ")

const listenLine = (error: HttpServerError.ServeError) => {
  // Node's listen error (EADDRINUSE, EACCES…) carries the address and port; the platform types its cause unknown.
  const cause = error.cause as { readonly address?: string; readonly port?: number } | undefined
  const where = `${cause?.address ?? "HOST"}:${cause?.port ?? "PORT"}`
  switch (errorCode(error.cause)) {
    case "EADDRINUSE":
      return `listen error: PORT ${
        cause?.port ?? ""
      } is already in use on ${where} (EADDRINUSE); stop what holds it, or set PORT to a free port (0 picks one)`
    case "EACCES":
      return `listen error: not allowed to listen on ${where} (EACCES); set PORT to 1024 or above`
    case "EADDRNOTAVAIL":
      return `listen error: HOST ${cause?.address ?? ""} is not an address of this machine (EADDRNOTAVAIL)`
    default:
      return `listen error: cannot listen on ${where} (HOST, PORT): ${reasonOf(error.cause)}`
  }
}

/**
 * The one line an operator sees when the service cannot start because of a configuration, database or port
 * mistake (no stack trace, no secret); none for anything else, which is logged with its cause. `database` says
 * where the service was connecting ("DATABASE_URL (PostgreSQL host:5432/db)"; see describeDatabase).
 */
export const startupFailureLine = (cause: Cause.Cause<unknown>, database?: string): Option.Option<string> => {
  const failure = Cause.findErrorOption(cause)
  if (Option.isNone(failure)) return Option.none()
  const error = failure.value
  if (error instanceof Config.ConfigError) return Option.some(`configuration error: ${describeConfigError(error)}`)
  if (error instanceof SqlError.SqlError) {
    // The driver's error is the reason's cause.
    const driverError = error.reason.cause
    if (isConnectFailure(error) && database !== undefined) {
      return Option.some(`database error: cannot connect to ${database}: ${reasonOf(driverError)}`)
    }
    const detail = messageOf(driverError)
    return Option.some(`database error: ${error.message}${detail === "" ? "" : `: ${detail}`}`)
  }
  if (error instanceof HttpServerError.ServeError) return Option.some(listenLine(error))
  return Option.none()
}
