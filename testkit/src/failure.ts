import { Data } from "effect"
import type { Exchange } from "./exchange.ts"

/**
 * A broken rule, told so that whoever reads it can act: what the rule is, what was expected, what came
 * back, and the request that shows it (reported with a copy-pasteable curl).
 */
export class ScenarioFailure extends Data.TaggedError("ScenarioFailure")<{
  readonly message: string
  readonly expected: string
  readonly actual: string
  readonly exchange: Exchange | undefined
  /** Anything else that helps reproduce it: the seed, the generated input, the shrunk input. */
  readonly details: Readonly<Record<string, unknown>> | undefined
  /** What broke, without what varies between scenarios; by default the message and the expectation (see rootCauseOf). */
  readonly rootCause: string | undefined
}> {}

/** Failures with the same root cause are one broken rule: the message and the expectation, unless told otherwise. */
export const rootCauseOf = (
  failure: { readonly message: string; readonly expected: string; readonly rootCause?: string | undefined }
): string => failure.rootCause ?? `${failure.message}\n${failure.expected}`

export const failure = (
  message: string,
  evidence: {
    readonly expected: string
    readonly actual: string
    readonly exchange?: Exchange | undefined
    readonly details?: Readonly<Record<string, unknown>> | undefined
    readonly rootCause?: string | undefined
  }
): ScenarioFailure =>
  new ScenarioFailure({
    message,
    expected: evidence.expected,
    actual: evidence.actual,
    exchange: evidence.exchange,
    details: evidence.details,
    rootCause: evidence.rootCause
  })

/** Compact, stable text of any JSON-ish value for expected/actual lines. */
export const show = (value: unknown): string => {
  if (typeof value === "string") return JSON.stringify(value)
  if (typeof value === "bigint") return value.toString()
  if (value === undefined) return "(absent)"
  const text = JSON.stringify(value)
  return text.length > 600 ? `${text.slice(0, 600)}… (${text.length} chars)` : text
}
