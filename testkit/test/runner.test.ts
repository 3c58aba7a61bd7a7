/**
 * What the kit runs, and what it refuses to: against a deployment that says it is live, money-moving and
 * mock-only scenarios are not run (money-moving ones run with allowLive); without a second key the
 * cross-tenant ones are not run; a filtered or partial run is never a full conformance claim.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestServer, type TestServer } from "../../test/support/server.ts"
import { ConfigurationError, exitCodeOf, runConformance } from "../src/index.ts"
import { jsonOf, type Proxy, startProxy, withJson } from "./support/proxy.ts"

let server: TestServer
/** The real (mock) service, except that GET /healthz says `live`. */
let saysLive: Proxy
let apiKey = ""

beforeAll(async () => {
  server = await startTestServer()
  apiKey = (await server.newIntegration()).apiKey
  saysLive = await startProxy(server.baseUrl, {
    response: (request, response) =>
      request.url === "/healthz" ? withJson(response, { ...(jsonOf(response.body) as object), mode: "live" }) : response
  })
})
afterAll(async () => {
  await saysLive?.close()
  await server?.close()
})

const statusOf = (report: Awaited<ReturnType<typeof runConformance>>) =>
  Object.fromEntries(report.scenarios.map((result) => [result.id, [result.status, result.reason ?? ""]]))

describe("against a deployment that says it is live", () => {
  const grep = ["HEALTH-001", "QUOTE-002", "OTP-001", "PAYOUT-001", "TENANT-001"]

  it("runs the read-only scenarios and refuses the money-moving and mock-only ones", async () => {
    const report = await runConformance({ baseUrl: saysLive.baseUrl, apiKey, grep, seed: 1 })
    expect(report.target).toMatchObject({ mode: "live", modeSource: "healthz" })
    expect(statusOf(report)).toEqual({
      "HEALTH-001": ["passed", ""],
      "QUOTE-002": ["passed", ""],
      "OTP-001": ["not_run", "money-moving: refused against a live deployment without --allow-live"],
      "PAYOUT-001": ["not_run", expect.stringMatching(/^needs a mock deployment/)],
      "TENANT-001": ["not_run", expect.stringMatching(/^needs a mock deployment/)]
    })
    expect(report.fullConformanceClaim).toBe(false)
    expect(report.claim).toMatch(
      /^PASSED, PARTIAL RUN: not a full conformance claim \(the run was filtered with --grep; 3 scenario\(s\) were not run\)/
    )
    expect(exitCodeOf(report)).toBe(0)
  }, 60_000)

  it("with allowLive runs the money-moving ones, which hold it to live rules (no debugCode)", async () => {
    const report = await runConformance({
      baseUrl: saysLive.baseUrl,
      apiKey,
      grep: ["OTP-001"],
      allowLive: true,
      seed: 1
    })
    const [otp] = report.scenarios
    expect(otp?.status).toBe("failed")
    expect(otp?.failure?.message).toBe("a live deployment never reveals the OTP")
    expect(exitCodeOf(report)).toBe(1)
  }, 60_000)

  it("refuses to start with --mode mock", async () => {
    await expect(runConformance({ baseUrl: saysLive.baseUrl, apiKey, mode: "mock" })).rejects.toThrow(
      ConfigurationError
    )
  })
})

describe("against the mock deployment without a second key", () => {
  it("reports the cross-tenant scenarios as not run and makes no full claim", async () => {
    const report = await runConformance({
      baseUrl: server.baseUrl,
      apiKey,
      grep: ["cross-tenant", "HEALTH-001"],
      seed: 1
    })
    const notRun = report.scenarios.filter((result) => result.status === "not_run")
    expect(notRun.map((result) => result.id).sort()).toEqual([
      "AUDIT-002",
      "BATCH-002",
      "IDEM-004",
      "LOGS-002",
      "PREVIEW-005",
      "REPORT-002",
      "SWAP-004",
      "TENANT-001",
      "TENANT-002",
      "TENANT-003",
      "TENANT-004",
      "TENANT-005",
      "TENANT-006",
      "TENANT-007",
      "TENANT-008",
      "TENANT-009"
    ])
    for (const result of notRun) expect(result.reason).toMatch(/--second-api-key/)
    expect(report.scenarios.find((result) => result.id === "HEALTH-001")?.status).toBe("passed")
    expect(report.fullConformanceClaim).toBe(false)
  }, 60_000)
})
