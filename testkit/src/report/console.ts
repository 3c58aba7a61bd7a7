/**
 * Console output: a line per scenario as it finishes, then every failure in full, one per root cause (a rule that
 * broke several scenarios is shown once, with their ids), the warnings, and the summary.
 */
import { describeCoverage } from "../coverage.ts"
import { describeFailureGroup, groupByRootCause, warningsOf } from "./text.ts"
import type { ConformanceReport, RunEvent, ScenarioResult } from "./types.ts"

export interface ConsoleStyle {
  readonly color: boolean
}

const paint = (style: ConsoleStyle, code: number, text: string) => (style.color ? `\x1b[${code}m${text}\x1b[0m` : text)

const marks: Record<ScenarioResult["status"], readonly [string, number]> = {
  passed: ["✓", 32],
  failed: ["✗", 31],
  error: ["!", 35],
  not_run: ["-", 33]
}

const resultLine = (result: ScenarioResult, style: ConsoleStyle, done: number, of: number): string => {
  const [mark, color] = marks[result.status]
  const counter = `[${String(done).padStart(String(of).length)}/${of}]`
  const timing = result.status === "not_run" ? `not run: ${result.reason ?? ""}` : `${result.durationMs} ms`
  const checks = typeof result.details["generatedChecks"] === "number"
    ? `, ${result.details["generatedChecks"]} generated checks`
    : ""
  return `${counter} ${paint(style, color, mark)} ${result.id.padEnd(22)} ${result.title} ${
    paint(style, 2, `(${timing}${checks})`)
  }`
}

/** The progress printer, for `runConformance({ onEvent })`. */
export const consoleProgress = (write: (text: string) => void, style: ConsoleStyle) => (event: RunEvent): void => {
  if (event._tag === "RunStarted") {
    const { baseUrl, mode, modeSource } = event.target
    write(`Integrations API conformance: ${event.selected} of ${event.total} scenarios against ${baseUrl}\n`)
    write(
      `mode ${mode} (${
        modeSource === "healthz" ? "reported by GET /healthz" : modeSource === "option" ? "--mode" : "default"
      }), seed ${event.seed}\n\n`
    )
    return
  }
  write(`${resultLine(event.result, style, event.done, event.of)}\n`)
}

export const consoleSummary = (report: ConformanceReport, style: ConsoleStyle): string => {
  const failures = report.scenarios.filter((result) => result.status === "failed" || result.status === "error")
  const groups = groupByRootCause(failures)
  const warnings = warningsOf(report.scenarios)
  const { summary } = report
  const verdict = report.fullConformanceClaim
    ? paint(style, 32, report.claim)
    : paint(style, failures.length > 0 ? 31 : 33, report.claim)
  return [
    "",
    ...groups.map((group) => `${paint(style, 31, "✗")} ${describeFailureGroup(group)}\n`),
    ...(warnings.length === 0 ? [] : [
      `${
        paint(style, 33, "⚠")
      } ${warnings.length} warning(s): compatible additions, not failures (--strict makes them failures)`,
      ...warnings.map((warning) => `  ${warning.message}\n    seen by ${warning.ids.join(", ")}`),
      ""
    ]),
    ...(report.coverage === undefined ? [] : [
      `coverage: ${describeCoverage(report.coverage)}${
        report.coverage.missed.operations.length === 0
          ? ""
          : ` (not exercised: ${report.coverage.missed.operations.join(", ")})`
      }`
    ]),
    `${summary.generatedChecks} generated checks, seed ${report.seed} (--seed ${report.seed} reproduces them), ${
      (report.durationMs / 1000).toFixed(1)
    } s`,
    verdict,
    `conformance: ${summary.passed} passed, ${summary.failed + summary.errors} failed, ${summary.notRun} skipped`,
    ""
  ].join("\n")
}
