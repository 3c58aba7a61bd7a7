/** JUnit XML as CI systems read it: one <testcase> per scenario, <failure>/<error>/<skipped> with messages. */
import { describeFailure } from "./text.ts"
import type { ConformanceReport, ScenarioResult } from "./types.ts"

/** Escapes markup and drops what XML 1.0 cannot carry (control characters, lone surrogates). */
const xml = (text: string): string =>
  text
    .replace(
      /[^\t\n\r\x20-\ud7ff\ue000-\ufffd]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g,
      "\ufffd"
    )
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;")
    .replaceAll("\"", "&quot;")
    .replaceAll("'", "&apos;")

const seconds = (ms: number) => (ms / 1000).toFixed(3)

/** `PAYOUT-CONFIRM-004` → `payout-confirm`. */
const area = (id: string) => id.replace(/-\d+$/, "").toLowerCase()

/** Warnings (compatible additions) of a testcase, as its standard output. */
const systemOut = (result: ScenarioResult): string =>
  result.warnings.length === 0
    ? ""
    : `\n      <system-out>${
      xml(result.warnings.map((warning) => `warning: ${warning.message}`).join("\n"))
    }</system-out>`

const testcase = (result: ScenarioResult): string => {
  const open = `    <testcase classname="integrations-conformance.${xml(area(result.id))}" name="${
    xml(`${result.id} ${result.title}`)
  }" time="${seconds(result.durationMs)}"`
  const out = systemOut(result)
  switch (result.status) {
    case "passed":
      return out === "" ? `${open}/>` : `${open}>${out}\n    </testcase>`
    case "not_run":
      return `${open}>\n      <skipped message="${xml(`not run: ${result.reason ?? ""}`)}"/>\n    </testcase>`
    case "failed":
    case "error": {
      const element = result.status === "failed" ? "failure" : "error"
      const type = result.status === "failed" ? "ConformanceFailure" : "KitError"
      const message = result.failure?.message ?? result.status
      return `${open}>\n      <${element} message="${xml(message)}" type="${type}">${
        xml(describeFailure(result))
      }</${element}>${out}\n    </testcase>`
    }
  }
}

export const toJUnit = (report: ConformanceReport): string => {
  const { summary } = report
  const counts =
    `tests="${summary.selected}" failures="${summary.failed}" errors="${summary.errors}" skipped="${summary.notRun}" time="${
      seconds(report.durationMs)
    }"`
  const properties = [
    ["baseUrl", report.target.baseUrl],
    ["mode", `${report.target.mode} (${report.target.modeSource})`],
    ["seed", String(report.seed)],
    ["kit", `${report.kit.name}@${report.kit.version}`],
    ["fullConformanceClaim", String(report.fullConformanceClaim)],
    ["verdict", report.verdict],
    ["claim", report.claim],
    ["generatedChecks", String(summary.generatedChecks)],
    ["warnings", String(summary.warnings)],
    ["strict", String(report.options.strict)]
  ].map(([name, value]) => `      <property name="${xml(name ?? "")}" value="${xml(value ?? "")}"/>`)
  return [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<testsuites name="integrations-conformance" ${counts}>`,
    `  <testsuite name="${
      xml(`Integrations API conformance (${report.target.mode}, ${report.target.baseUrl})`)
    }" ${counts} timestamp="${xml(report.startedAt)}">`,
    `    <properties>`,
    ...properties,
    `    </properties>`,
    ...report.scenarios.map(testcase),
    `  </testsuite>`,
    `</testsuites>`,
    ""
  ].join("\n")
}
