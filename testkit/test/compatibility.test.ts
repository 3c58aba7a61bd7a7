/**
 * DESIGN §4 in the kit's runner, CLI and report: an added resource field is a warning (a failure only with
 * --strict) while ErrorBody stays exact; a key that does not authenticate refuses the run before any scenario
 * (exit 2, one line); the exit code always agrees with the verdict line, including a run where nothing ran; and a
 * rule that broke several scenarios is shown once, with the scenarios it broke.
 */
import { execFile } from "node:child_process"
import { fileURLToPath } from "node:url"
import { beforeAll, describe, expect, it } from "vitest"
import { ConfigurationError, consoleSummary, exitCodeOf, runConformance } from "../src/index.ts"
import { type Interceptor, jsonOf, type Proxy, urlParts, withJson } from "./support/proxy.ts"
import { serviceBehindProxies } from "./support/service.ts"

const CLI = fileURLToPath(new URL("../src/cli.ts", import.meta.url))

const cli = (args: ReadonlyArray<string>, env: Readonly<Record<string, string>> = {}) =>
  new Promise<{ readonly code: number; readonly stdout: string; readonly stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      ["--import", "tsx", CLI, ...args],
      { env: { ...process.env, NO_COLOR: "1", ...env } },
      (error, stdout, stderr) => {
        resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, stdout, stderr })
      }
    )
  })

const service = serviceBehindProxies()
const { through } = service

type Json = Record<string, unknown>
const statuses = (report: { readonly scenarios: ReadonlyArray<{ readonly id: string; readonly status: string }> }) =>
  Object.fromEntries(report.scenarios.map((result) => [result.id, result.status]))
const PAYOUTS = "/api/integrations/breb/payouts"
const isJsonOk = (response: { status: number; headers: Readonly<Record<string, string>>; body: Buffer }) =>
  response.status < 300 && (response.headers["content-type"] ?? "").includes("json") && response.body.length > 0

/** Payouts (created, read, confirmed) and quotes answered with a field the contract does not know. */
const addedFields: Interceptor = {
  response: (request, response) => {
    const { path } = urlParts(request.url)
    if (!isJsonOk(response) || !(path.startsWith(PAYOUTS) || path.endsWith("/breb/quote"))) return response
    const body = jsonOf(response.body) as Json
    return "payoutId" in body || "quoteId" in body ? withJson(response, { ...body, riskScore: "low" }) : response
  }
}

describe("an added resource field (DESIGN §4 Compatibility)", () => {
  const grep = ["PAYOUT-001", "QUOTE-002"]

  it("is a warning: the scenarios pass, the report names the field and the scenarios that saw it, exit 0", async () => {
    const proxy = await through(addedFields)
    const report = await runConformance({ baseUrl: proxy.baseUrl, apiKey: service.apiKey, grep, seed: 3 })
    expect(statuses(report)).toEqual({ "PAYOUT-001": "passed", "QUOTE-002": "passed" })
    const warnings = report.scenarios.flatMap((result) =>
      result.warnings.map((warning) => `${result.id} ${warning.message}`)
    )
    expect(warnings).toContainEqual(
      expect.stringMatching(
        /^PAYOUT-001 POST \/api\/integrations\/breb\/payouts answered fields the contract does not know: riskScore/
      )
    )
    expect(warnings).toContainEqual(
      expect.stringMatching(
        /^QUOTE-002 GET \/api\/integrations\/breb\/quote answered fields the contract does not know: riskScore/
      )
    )
    expect(report.summary.warnings).toBeGreaterThanOrEqual(2)
    expect(report.options.strict).toBe(false)
    expect(exitCodeOf(report)).toBe(0)
    const text = consoleSummary(report, { color: false })
    expect(text).toMatch(/⚠ \d+ warning\(s\): compatible additions, not failures \(--strict makes them failures\)/)
    expect(text).toMatch(/riskScore .*\n {4}seen by PAYOUT-001/)
  }, 60_000)

  it("fails the scenario with --strict (strict: true), naming the field", async () => {
    const proxy = await through(addedFields)
    const report = await runConformance({ baseUrl: proxy.baseUrl, apiKey: service.apiKey, grep, seed: 3, strict: true })
    const payout = report.scenarios.find((result) => result.id === "PAYOUT-001")
    expect(payout?.status).toBe("failed")
    expect(payout?.failure?.actual).toMatch(/fields the contract does not know \(--strict\): riskScore/)
    expect(report.verdict).toBe("not_conformant")
    expect(exitCodeOf(report)).toBe(1)
  }, 60_000)

  it("never applies to ErrorBody, which stays exact: an extra field in an error fails without --strict", async () => {
    const proxy = await through({
      response: (_, response) =>
        response.status === 404
          ? withJson(response, { ...(jsonOf(response.body) as Json), hint: "try another path" })
          : response
    })
    const report = await runConformance({ baseUrl: proxy.baseUrl, apiKey: service.apiKey, grep: ["ERR-001"], seed: 3 })
    expect(report.scenarios[0]?.status).toBe("failed")
    expect(`${report.scenarios[0]?.failure?.actual}`).toMatch(/hint/)
  }, 60_000)
})

describe("a key that does not authenticate (DESIGN §4)", () => {
  /** Shaped like a key, never issued. */
  const unknownKey = () => `${service.apiKey.slice(0, -6)}${service.apiKey.endsWith("zzzzzz") ? "yyyyyy" : "zzzzzz"}`

  it(
    "refuses the run before any scenario: only the preflight's GET /healthz, GET /openapi.json and the one probe reach the deployment",
    async () => {
      const seen: Array<string> = []
      const proxy = await through({
        request: (request) => {
          seen.push(`${request.method} ${request.url}`)
          return request
        }
      })
      await expect(runConformance({ baseUrl: proxy.baseUrl, apiKey: unknownKey(), seed: 1 })).rejects.toThrow(
        ConfigurationError
      )
      expect(seen).toEqual(["GET /healthz", "GET /openapi.json", `GET ${PAYOUTS}?limit=1`])
    },
    30_000
  )

  it("checks the second key too", async () => {
    await expect(
      runConformance({ baseUrl: service.server.baseUrl, apiKey: service.apiKey, secondApiKey: unknownKey(), seed: 1 })
    ).rejects
      .toThrow(
        /the API key cop_test_pk_…[0-9A-Za-z]{4} \(--second-api-key, CONFORMANCE_SECOND_API_KEY\) is unknown to this deployment/
      )
  }, 30_000)

  it("the CLI exits 2 with one line, and prints no scenario", async () => {
    const { code, stderr, stdout } = await cli(["--base-url", service.server.baseUrl], {
      CONFORMANCE_API_KEY: unknownKey()
    })
    expect(code).toBe(2)
    const lines = stderr.trim().split("\n")
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(
      /^integrations-conformance: the API key cop_test_pk_…[0-9A-Za-z]{4} \(--api-key, CONFORMANCE_API_KEY\) is unknown to this deployment \(never issued here, mistyped or revoked\): GET \/api\/integrations\/breb\/payouts\?limit=1 answered 401; no scenario was run$/
    )
    expect(stderr).not.toContain(unknownKey())
    expect(stdout).toBe("")
  }, 60_000)
})

describe("the exit code agrees with the verdict line", () => {
  let saysLive: Proxy
  beforeAll(async () => {
    saysLive = await through({
      response: (request, response) =>
        request.url === "/healthz" ? withJson(response, { ...(jsonOf(response.body) as Json), mode: "live" }) : response
    })
  })

  const verdictLine = (stdout: string) =>
    stdout.split("\n").find((line) => /^(CONFORMANT|PASSED|NOT CONFORMANT|NOTHING RAN)\b/.test(line))

  it("a run where nothing ran says NOTHING RAN and exits 2 (it said PASSED and exited 1)", async () => {
    const { code, stdout } = await cli(["--base-url", saysLive.baseUrl, "--grep", "OTP-001,PAYOUT-001"], {
      CONFORMANCE_API_KEY: service.apiKey
    })
    expect(verdictLine(stdout)).toMatch(
      /^NOTHING RAN: none of the 2 selected scenario\(s\) could run here, so nothing was tested \(money-moving: refused/
    )
    expect(code).toBe(2)
  }, 60_000)

  it("PASSED, PARTIAL RUN exits 0 and NOT CONFORMANT exits 1", async () => {
    const partial = await cli(["--base-url", saysLive.baseUrl, "--grep", "HEALTH-001,OTP-001"], {
      CONFORMANCE_API_KEY: service.apiKey
    })
    expect(verdictLine(partial.stdout)).toMatch(/^PASSED, PARTIAL RUN/)
    expect(partial.code).toBe(0)
    const failed = await cli(["--base-url", saysLive.baseUrl, "--grep", "OTP-001", "--allow-live"], {
      CONFORMANCE_API_KEY: service.apiKey
    })
    expect(verdictLine(failed.stdout)).toMatch(/^NOT CONFORMANT/)
    expect(failed.code).toBe(1)
  }, 60_000)

  it("the library's exitCodeOf follows report.verdict", async () => {
    const report = await runConformance({
      baseUrl: saysLive.baseUrl,
      apiKey: service.apiKey,
      grep: ["OTP-001"],
      seed: 1
    })
    expect([report.verdict, report.fullConformanceClaim, exitCodeOf(report)]).toEqual(["nothing_ran", false, 2])
  }, 30_000)
})

describe("failures grouped by root cause", () => {
  const grep = ["PAYOUT-001", "PAYOUT-002", "PAYOUT-003", "QUOTE-002"]

  /** The count of lines of `text` that are exactly `line`. */
  const occurrences = (text: string, pattern: RegExp) => text.split("\n").filter((line) => pattern.test(line)).length

  it(
    "one rule that breaks every payout scenario (OTP verify never approves) is shown once, with the scenarios it broke",
    async () => {
      const proxy = await through({
        response: (request, response) =>
          urlParts(request.url).path.endsWith("/kyc/otp/verify") && isJsonOk(response)
            ? withJson(response, { ...(jsonOf(response.body) as Json), kycStatus: "pending" })
            : response
      })
      const report = await runConformance({ baseUrl: proxy.baseUrl, apiKey: service.apiKey, grep, seed: 5 })
      expect(statuses(report)).toEqual({
        "PAYOUT-001": "failed",
        "PAYOUT-002": "failed",
        "PAYOUT-003": "failed",
        "QUOTE-002": "passed"
      })
      expect(report.summary.rootCauses).toBe(1)
      expect(report.claim).toBe("NOT CONFORMANT: 3 scenario(s) failed, from 1 distinct cause(s)")
      const text = consoleSummary(report, { color: false })
      expect(occurrences(text, /^✗ /)).toBe(1)
      expect(occurrences(text, /a valid OTP approves KYC in mock mode/)).toBe(1)
      expect(text).toContain("broke 3 scenarios: PAYOUT-001, PAYOUT-002, PAYOUT-003")
      // the JSON and JUnit reports stay per scenario
      expect(report.scenarios.filter((result) => result.failure !== undefined)).toHaveLength(3)
    },
    60_000
  )

  it("a contract violation with different values in each answer is one cause; another rule is another", async () => {
    const proxy = await through({
      response: (request, response) => {
        const { path } = urlParts(request.url)
        if (request.method !== "POST" || path !== PAYOUTS || response.status !== 201) return response
        const body = jsonOf(response.body) as Json
        return withJson(response, { ...body, destinationCop: Number(body["destinationCop"]) })
      }
    })
    const report = await runConformance({
      baseUrl: proxy.baseUrl,
      apiKey: service.apiKey,
      grep: [...grep, "ERR-001"],
      seed: 5
    })
    const failed = report.scenarios.filter((result) => result.status === "failed").map((result) => result.id)
    expect(failed).toEqual(["PAYOUT-001", "PAYOUT-002", "PAYOUT-003"])
    expect(new Set(report.scenarios.flatMap((result) => result.failure?.actual ?? [])).size).toBe(3)
    expect(report.summary.rootCauses).toBe(1)
    const text = consoleSummary(report, { color: false })
    expect(occurrences(text, /^✗ POST \/api\/integrations\/breb\/payouts answered outside the contract$/)).toBe(1)
    expect(text).toContain("broke 3 scenarios: PAYOUT-001, PAYOUT-002, PAYOUT-003")
  }, 60_000)
})
