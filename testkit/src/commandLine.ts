/**
 * What the kit's two commands (the run in ./cli.ts, `receiver` in ./receiverCli.ts) share once their options are read:
 * the --grep terms, writing the json and junit reports, and the exit code of the report. A plain module: the commands
 * load it before they know their arguments are usable (cli.ts runs on import, so it cannot be imported from).
 */
import { mkdir, writeFile } from "node:fs/promises"
import { dirname } from "node:path"
import { toJson } from "./report/json.ts"
import { toJUnit } from "./report/junit.ts"
import type { ConformanceReport } from "./report/types.ts"

export type ReporterName = "console" | "json" | "junit"

export interface Reporter {
  readonly name: ReporterName
  /** undefined: stdout */
  readonly file: string | undefined
}

/** --grep's values: each repeatable or comma-separated, trimmed, blanks dropped. */
export const grepTerms = (values: ReadonlyArray<string> | undefined): Array<string> =>
  (values ?? []).flatMap((term) => term.split(",")).map((term) => term.trim()).filter((term) => term !== "")

const render = (
  name: Exclude<ReporterName, "console">,
  report: ConformanceReport
) => (name === "json" ? toJson(report) : toJUnit(report))

/**
 * Writes the report for each json or junit reporter: to its file (then `say`, the console reporter's output when it is
 * on, tells where), else to stdout.
 */
export const writeReports = async (
  reporters: ReadonlyArray<Reporter>,
  report: ConformanceReport,
  say: ((text: string) => void) | undefined
): Promise<void> => {
  for (const reporter of reporters) {
    if (reporter.name === "console") continue
    const text = render(reporter.name, report)
    if (reporter.file === undefined) {
      process.stdout.write(text)
    } else {
      await mkdir(dirname(reporter.file), { recursive: true })
      await writeFile(reporter.file, text)
      say?.(`${reporter.name} report: ${reporter.file}\n`)
    }
  }
}

/**
 * The exit code of a run, from its verdict (the line the report prints): 0 CONFORMANT or PASSED, PARTIAL RUN (at
 * least one scenario ran, and every one that ran passed), 1 NOT CONFORMANT (a scenario failed or the kit broke),
 * 2 NOTHING RAN (no selected scenario could run here: nothing was tested, as when the run cannot start).
 */
export const exitCodeOf = (report: ConformanceReport): number => {
  switch (report.verdict) {
    case "conformant":
    case "partial":
      return 0
    case "not_conformant":
      return 1
    case "nothing_ran":
      return 2
  }
}
