import { XMLParser, XMLValidator } from "fast-xml-parser"
import { describe, expect, it } from "vitest"
import { consoleSummary } from "../src/report/console.ts"
import { toJson } from "../src/report/json.ts"
import { toJUnit } from "../src/report/junit.ts"
import type { ConformanceReport, ScenarioResult } from "../src/report/types.ts"
import { describeRule, describeRules } from "../src/rules.ts"

const result = (id: string, status: ScenarioResult["status"], extra: Partial<ScenarioResult> = {}): ScenarioResult => ({
  id,
  title: `title of ${id}`,
  rule: describeRules(["R-ERR-2", "R-CONTRACT-2"]),
  tags: ["test"],
  status,
  durationMs: 12,
  reason: undefined,
  failure: undefined,
  details: {},
  requests: [],
  exchangeHashes: [],
  evidence: [],
  warnings: [],
  ...extra
})

const report: ConformanceReport = {
  kit: { name: "@cop-integrations/testkit", version: "0.1.0" },
  target: { baseUrl: "http://127.0.0.1:1", mode: "mock", modeSource: "healthz" },
  seed: 7,
  startedAt: "2026-11-22T00:00:00.000Z",
  durationMs: 1234,
  options: {
    grep: [],
    allowLive: false,
    secondKey: false,
    timeoutMs: 30000,
    concurrency: 4,
    negativeCases: 30,
    strict: false
  },
  summary: {
    scenarios: 3,
    selected: 3,
    passed: 1,
    failed: 1,
    errors: 0,
    notRun: 1,
    generatedChecks: 0,
    warnings: 0,
    rootCauses: 1
  },
  fullConformanceClaim: false,
  verdict: "not_conformant",
  claim: "NOT CONFORMANT: 1 scenario(s) failed",
  scenarios: [
    result("AUTH-001", "passed"),
    result("NEG-PAYOUT-CREATE-001", "failed", {
      failure: {
        message: "1 of 30 generated invalid inputs were not answered with a 4xx ErrorBody <&>",
        expected: "400 with an ErrorBody",
        actual: "500 {\"error\":\"bad \u0000 byte \ud800 and ]]> \"}",
        curl: "curl -sS -i -X POST 'http://127.0.0.1:1/api' \\\n  -H \"Authorization: Bearer $CONFORMANCE_API_KEY\"",
        reproduce: undefined,
        rootCause: "generated invalid inputs",
        details: { seed: 7, shrunkInput: "{\"userAddress\":0}" }
      }
    }),
    result("TENANT-001", "not_run", { reason: "needs --second-api-key" })
  ]
}

describe("the JUnit report", () => {
  const xml = toJUnit(report)
  const parsed = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: "" }).parse(xml)
  const cases = parsed.testsuites.testsuite.testcase as ReadonlyArray<Record<string, unknown>>

  it("is well-formed XML even when a response carried control characters", () => {
    expect(XMLValidator.validate(xml)).toBe(true)
  })

  it("has one testcase per scenario, a failure with its message and a skipped with its reason", () => {
    expect(cases.map((testcase) => testcase["name"])).toEqual(report.scenarios.map((r) => `${r.id} ${r.title}`))
    expect(parsed.testsuites.tests).toBe("3")
    expect(parsed.testsuites.failures).toBe("1")
    const failure = cases[1]?.["failure"] as Record<string, string>
    expect(failure["message"]).toContain("not answered with a 4xx ErrorBody <&>")
    expect(failure["#text"]).toContain("curl -sS -i -X POST")
    expect(failure["#text"]).toContain("shrunkInput")
    expect((cases[2]?.["skipped"] as Record<string, string>)["message"]).toBe("not run: needs --second-api-key")
  })
})

describe("warnings (fields the contract does not know) in the reports", () => {
  const message =
    "GET /api/integrations/breb/payouts/:payoutId answered fields the contract does not know: riskScore (a compatible addition; --strict fails on it)"
  const warned: ConformanceReport = {
    ...report,
    summary: { ...report.summary, warnings: 1 },
    scenarios: report.scenarios.map((
      r
    ) => (r.id === "AUTH-001" ? { ...r, warnings: [{ message, curl: undefined }] } : r))
  }

  it("JUnit: a <system-out> of the passed testcase, and a warnings property", () => {
    const xml = toJUnit(warned)
    expect(XMLValidator.validate(xml)).toBe(true)
    const parsed = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: "" }).parse(xml)
    const cases = parsed.testsuites.testsuite.testcase as ReadonlyArray<Record<string, unknown>>
    expect(cases[0]?.["system-out"]).toBe(`warning: ${message}`)
    const properties = parsed.testsuites.testsuite.properties.property as ReadonlyArray<{ name: string; value: string }>
    expect(properties.find((property) => property.name === "warnings")?.value).toBe("1")
  })

  it("console: once, with the scenarios that saw it", () => {
    const text = consoleSummary(warned, { color: false })
    expect(text).toContain(
      `⚠ 1 warning(s): compatible additions, not failures (--strict makes them failures)\n  ${message}\n    seen by AUTH-001`
    )
  })
})

describe("the JSON and console reports", () => {
  it("JSON carries id, status, duration and the failure of each scenario", () => {
    const parsed = JSON.parse(toJson(report)) as ConformanceReport
    expect(parsed.scenarios.map((r) => [r.id, r.status, r.durationMs])).toEqual([
      ["AUTH-001", "passed", 12],
      ["NEG-PAYOUT-CREATE-001", "failed", 12],
      ["TENANT-001", "not_run", 12]
    ])
    expect(parsed.scenarios[1]?.failure?.curl).toContain("$CONFORMANCE_API_KEY")
  })

  it("the console summary shows the failure in full and a closing count line", () => {
    const text = consoleSummary(report, { color: false })
    expect(text).toContain(
      `\nrule:     ${describeRule("R-ERR-2")}\n          ${
        describeRule("R-CONTRACT-2")
      }\nexpected: 400 with an ErrorBody`
    )
    expect(describeRule("R-ERR-2")).toMatch(/^R-ERR-2: invalid input is 400 ErrorBody .* \(README#errors\)$/)
    expect(text).toContain("reproduce (with CONFORMANCE_API_KEY set):")
    expect(text).toContain("NOT CONFORMANT")
    expect(text.split("\n")).toContain("conformance: 1 passed, 1 failed, 1 skipped")
  })
})
