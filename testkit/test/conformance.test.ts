/**
 * The project's own conformance run: the service on a fresh database, the whole kit against it through
 * the kit's vitest helper (one test per scenario). Every scenario must pass and the run must be a full
 * conformance claim (nothing filtered, nothing left unrun).
 */
import { afterAll, expect, it } from "vitest"
import { startTestServer, type TestServer } from "../../test/support/server.ts"
import type { ConformanceReport } from "../src/index.ts"
import { describeConformance } from "../src/vitest.ts"

let server: TestServer | undefined
let report: ConformanceReport | undefined

afterAll(() => server?.close())

describeConformance(async () => {
  server = await startTestServer()
  const [first, second] = [await server.newIntegration(), await server.newIntegration()]
  return { baseUrl: server.baseUrl, apiKey: first.apiKey, secondApiKey: second.apiKey }
}, {
  name: "the service keeps the contract (full kit, fresh database)",
  onReport: (finished) => {
    report = finished
  }
})

it("is a full conformance claim: every scenario ran and passed", () => {
  expect(report?.claim).toBe("CONFORMANT: every scenario of the kit ran and passed")
  expect(report?.fullConformanceClaim).toBe(true)
  expect(report?.verdict).toBe("conformant")
  // the service itself answers exactly what the contract says: no field it does not know
  expect(report?.summary.warnings).toBe(0)
  expect(report?.summary.generatedChecks).toBeGreaterThan(100)
})
