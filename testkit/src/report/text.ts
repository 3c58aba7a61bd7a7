import { KEY_VARIABLES } from "../curl.ts"
import type { ScenarioResult } from "./types.ts"

const indent = (text: string, by: string) => text.split("\n").map((line) => `${by}${line}`).join("\n")

const detailLine = ([key, value]: readonly [string, unknown]): string =>
  Array.isArray(value)
    ? [`${key}:`, ...value.map((item) => `  - ${typeof item === "string" ? item : JSON.stringify(item)}`)].join("\n")
    : `${key}: ${typeof value === "string" ? value : JSON.stringify(value)}`

/** A failure told in full: rule, expected, actual, details (seed, shrunk input) and the curl to reproduce it. */
export const describeFailure = (result: ScenarioResult): string => {
  const failure = result.failure
  if (failure === undefined) return ""
  return [
    `${result.id}: ${failure.message}`,
    ...(failure.message === result.rule ? [] : [`rule:     ${result.rule}`]),
    `expected: ${failure.expected}`,
    `actual:   ${failure.actual}`,
    ...(failure.details === undefined ? [] : ["details:", indent(Object.entries(failure.details).map(detailLine).join("\n"), "  ")]),
    ...(failure.curl === undefined ? [] : [
      `reproduce (with ${KEY_VARIABLES.primary}${failure.curl.includes(KEY_VARIABLES.second) ? ` and ${KEY_VARIABLES.second}` : ""} set):`,
      indent(failure.curl, "  ")
    ])
  ].join("\n")
}
