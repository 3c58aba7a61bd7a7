/**
 * The coverage index (issue #35, part 4): every report says which operations, operation × status pairs and error
 * codes the run's answers exercised, out of those the contract declares, and names what it left out; a filtered run
 * shows how little it covered.
 */
import { ErrorCode } from "@cop-integrations/contracts"
import { afterAll, beforeAll, expect, it } from "vitest"
import { startTestServer, type TestServer } from "../../test/support/server.ts"
import { endpoints } from "../src/contract.ts"
import { consoleSummary, runConformance } from "../src/index.ts"

let server: TestServer
let apiKey = ""
beforeAll(async () => {
  server = await startTestServer()
  apiKey = (await server.newIntegration()).apiKey
})
afterAll(() => server?.close())

it("a filtered run reports what it exercised of the contract, and what it left out", async () => {
  const report = await runConformance({ baseUrl: server.baseUrl, apiKey, grep: ["HEALTH-001", "QUOTE-003"], seed: 5 })
  const coverage = report.coverage!
  expect(coverage.operations.declared).toBe(endpoints.size)
  expect(coverage.errorCodes.declared).toBe(ErrorCode.literals.length)
  expect(coverage.operations.exercised).toBe(coverage.operations.declared - coverage.missed.operations.length)
  expect(coverage.statuses.exercised).toBe(coverage.statuses.declared - coverage.missed.statuses.length)
  // what the two scenarios called, and nothing else
  expect(coverage.missed.operations).not.toContain("GET /healthz")
  expect(coverage.missed.operations).not.toContain("GET /api/integrations/breb/quote")
  expect(coverage.missed.operations).toContain("POST /api/integrations/breb/payouts")
  expect(coverage.missed.statuses).toContain("GET /api/integrations/breb/quote 401")
  expect(coverage.operations.exercised).toBe(2)
  expect(consoleSummary(report, { color: false })).toMatch(
    new RegExp(`coverage: 2/${endpoints.size} operations, \\d+/\\d+ operation × status, \\d+/\\d+ error codes`)
  )
})
