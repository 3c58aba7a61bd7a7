/**
 * The run cannot start (bad options, an unreachable deployment or receiver, a mode mismatch): nothing was tested. A
 * module of its own, with no imports, so that the CLI tells a usage problem (one line, exit 2) without loading the
 * runner.
 */
export class ConfigurationError extends Error {
  override readonly name = "ConfigurationError"
}
