import { KEY_VARIABLES } from "../curl.ts"
import type { FailureReport, ScenarioResult } from "./types.ts"

const indent = (text: string, by: string) => text.split("\n").map((line) => `${by}${line}`).join("\n")

const detailLine = ([key, value]: readonly [string, unknown]): string =>
  Array.isArray(value)
    ? [`${key}:`, ...value.map((item) => `  - ${typeof item === "string" ? item : JSON.stringify(item)}`)].join("\n")
    : `${key}: ${typeof value === "string" ? value : JSON.stringify(value)}`

/** The curl, or the script with the setup it depends on, and which key variables it reads. */
const reproduceLines = (failure: FailureReport): ReadonlyArray<string> => {
  const script = failure.reproduce ?? failure.curl
  if (script === undefined) return []
  if (!script.includes(KEY_VARIABLES.primary)) {
    // the receiver kit's: deliveries to a partner's receiver, which need no key
    return [
      failure.reproduce === undefined ? "reproduce:" : "reproduce, with the requests before it:",
      indent(script, "  ")
    ]
  }
  const keys = `${KEY_VARIABLES.primary}${
    script.includes(KEY_VARIABLES.second) ? ` and ${KEY_VARIABLES.second}` : ""
  } set`
  const header = failure.reproduce === undefined
    ? `reproduce (with ${keys}):`
    : `reproduce, with the setup requests it depends on (bash with ${keys}; node reads the ids):`
  return [header, indent(script, "  ")]
}

/** Rule, expected, actual, details (seed, shrunk input) and the reproduction of a failure. */
const failureBody = (result: ScenarioResult, failure: FailureReport): ReadonlyArray<string> => [
  ...(failure.message === result.rule ? [] : [`rule:     ${indent(result.rule, "          ").trimStart()}`]),
  `expected: ${failure.expected}`,
  `actual:   ${failure.actual}`,
  ...(failure.details === undefined
    ? []
    : ["details:", indent(Object.entries(failure.details).map(detailLine).join("\n"), "  ")]),
  ...reproduceLines(failure)
]

/** A failure told in full: rule, expected, actual, details (seed, shrunk input) and the curl to reproduce it. */
export const describeFailure = (result: ScenarioResult): string => {
  const failure = result.failure
  if (failure === undefined) return ""
  return [`${result.id}: ${failure.message}`, ...failureBody(result, failure)].join("\n")
}

/**
 * Failures with one root cause (see FailureReport.rootCause), told once: the broken rule, every scenario it broke,
 * and the first of them in full.
 */
export const describeFailureGroup = (results: ReadonlyArray<ScenarioResult>): string => {
  const [first] = results
  if (first?.failure === undefined) return ""
  if (results.length === 1) return describeFailure(first)
  return [
    `${first.failure.message}`,
    `broke ${results.length} scenarios: ${results.map((result) => result.id).join(", ")}`,
    `as ${first.id} saw it (the others failed the same way):`,
    ...failureBody(first, first.failure)
  ].join("\n")
}

/** Failed and errored results grouped by root cause, in the order the causes first appear. */
export const groupByRootCause = (
  results: ReadonlyArray<ScenarioResult>
): ReadonlyArray<ReadonlyArray<ScenarioResult>> => {
  const groups = new Map<string, Array<ScenarioResult>>()
  for (const result of results) {
    if (result.failure === undefined) continue
    const group = groups.get(result.failure.rootCause)
    if (group === undefined) groups.set(result.failure.rootCause, [result])
    else group.push(result)
  }
  return [...groups.values()]
}

/** Each warning once, with the scenarios that saw it. */
export const warningsOf = (
  results: ReadonlyArray<ScenarioResult>
): ReadonlyArray<{ readonly message: string; readonly ids: ReadonlyArray<string> }> => {
  const seen = new Map<string, Array<string>>()
  for (const result of results) {
    for (const warning of result.warnings) {
      const ids = seen.get(warning.message)
      if (ids === undefined) seen.set(warning.message, [result.id])
      else ids.push(result.id)
    }
  }
  return [...seen].map(([message, ids]) => ({ message, ids }))
}
