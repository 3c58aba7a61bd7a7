/** Assertions for scenarios: each failure carries the rule, what was expected, what came back, and the request. */
import { Duration, Effect } from "effect"
import { canonicalJson } from "./canonicalJson.ts"
import { failure, type ScenarioFailure, show } from "./failure.ts"
import type { Exchange } from "./http.ts"
import type { Kit } from "./scenario.ts"
import { acceptedVersions, acceptsVersion, laterVersionWarning, versionFit } from "./versioning.ts"

export const check = (
  condition: boolean,
  rule: string,
  evidence: { readonly expected: string; readonly actual: string; readonly exchange?: Exchange | undefined }
): Effect.Effect<void, ScenarioFailure> => (condition ? Effect.void : Effect.fail(failure(rule, evidence)))

/** Same JSON value (key order ignored). */
export const sameJson = (a: unknown, b: unknown): boolean => canonicalJson(a) === canonicalJson(b)

export const checkEqual = <A>(
  rule: string,
  actual: A,
  expected: A,
  exchange?: Exchange
): Effect.Effect<void, ScenarioFailure> =>
  check(sameJson(actual, expected), rule, { expected: show(expected), actual: show(actual), exchange })

/** `2026-11-22T03:19:32.123Z`: ISO 8601 UTC with milliseconds (R-CONTRACT-2). */
export const isIsoMillisUtc = (text: string | null): boolean =>
  text !== null && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/.test(text) && !Number.isNaN(Date.parse(text))

export const checkTimestamps = (
  rule: string,
  fields: Readonly<Record<string, string | null>>,
  exchange?: Exchange
): Effect.Effect<void, ScenarioFailure> =>
  Effect.forEach(
    Object.entries(fields),
    ([name, value]) =>
      check(isIsoMillisUtc(value), rule, {
        expected: `${name} as ISO 8601 UTC with milliseconds (2026-11-22T03:19:32.123Z)`,
        actual: show(value),
        exchange
      }),
    { discard: true }
  )

/** The error text names what was wrong: "400 {error} whose text names the field and the rule" (R-ERR-2). */
export const checkNamesField = (
  rule: string,
  error: { readonly error: string },
  field: string,
  exchange?: Exchange
): Effect.Effect<void, ScenarioFailure> =>
  check(error.error.includes(field), rule, {
    expected: `an error message naming ${field}`,
    actual: show(error.error),
    exchange
  })

/**
 * The version a deployment reports (`field` of the answer to `where`) is one the kit checks (README#versioning): its
 * own, or a later one of its line unless --strict; a later one is a warning.
 */
export const checkVersion = (
  kit: Pick<Kit, "strict" | "warn">,
  where: string,
  field: string,
  version: unknown,
  rule: string,
  exchange: Exchange
): Effect.Effect<void, ScenarioFailure> =>
  Effect.gen(function*() {
    const fit = versionFit(version)
    yield* check(acceptsVersion(fit, kit.strict), rule, {
      expected: `${field} ${acceptedVersions(kit.strict)}`,
      actual: `${show(version)} (${fit})`,
      exchange
    })
    if (fit === "later") kit.warn(laterVersionWarning(where, String(version)), exchange)
  })

const POLL_MARGIN_MS = 300

/**
 * Repeats `attempt` until `done` holds, at most until shortly before the scenario's deadline; then fails
 * with what was last seen. Never a blind sleep: the condition decides.
 */
export const pollUntil = <A>(
  kit: Kit,
  options: {
    readonly rule: string
    readonly expected: string
    readonly intervalMs?: number
    readonly describe: (last: A) => string
    readonly exchange?: (last: A) => Exchange | undefined
  },
  attempt: Effect.Effect<A, ScenarioFailure>,
  done: (value: A) => boolean
): Effect.Effect<A, ScenarioFailure> =>
  Effect.gen(function*() {
    const interval = options.intervalMs ?? 100
    for (;;) {
      const value = yield* attempt
      if (done(value)) return value
      if (Date.now() + interval > kit.deadline - POLL_MARGIN_MS) {
        return yield* Effect.fail(failure(options.rule, {
          expected: options.expected,
          actual: `${options.describe(value)} when the scenario's time ran out`,
          exchange: options.exchange?.(value)
        }))
      }
      yield* Effect.sleep(Duration.millis(interval))
    }
  })
