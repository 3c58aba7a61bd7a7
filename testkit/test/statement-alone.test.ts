/**
 * REPORT-003 compares a whole day's statement with that day's report rows, read one after the other. Another scenario
 * creating or confirming payouts of the same integration in between changes the day under it, and after a few such
 * reads it could only warn that nothing was compared (a full-kit CI run on a busy machine did). It runs alone, before
 * the scenarios that move payouts: between its first and last statement read, no other request changes anything.
 */
import { afterAll, beforeAll, expect, it } from "vitest"
import { startTestServer, type TestServer } from "../../test/support/server.ts"
import { runConformance } from "../src/index.ts"

let server: TestServer
let apiKey = ""

beforeAll(async () => {
  server = await startTestServer()
  apiKey = (await server.newIntegration()).apiKey
})
afterAll(() => server?.close())

interface Sent {
  readonly method: string
  readonly path: string
}

it("REPORT-003 reads the statement while no other scenario moves payouts, and passes without a warning", async () => {
  const sent: Array<Sent> = []
  const recording: typeof globalThis.fetch = (input, init) => {
    const request = new Request(input, init)
    sent.push({ method: request.method, path: new URL(request.url).pathname })
    return globalThis.fetch(request)
  }
  // scenarios that create, confirm and advance payouts of the same integration, run beside it at the kit's default
  const report = await runConformance({
    baseUrl: server.baseUrl,
    apiKey,
    grep: ["REPORT-003", "PAYOUT-CONFIRM", "EVT-005", "EVT-006", "SBX-001"],
    seed: 3,
    fetch: recording
  })

  const reportResult = report.scenarios.find((result) => result.id === "REPORT-003")
  expect(reportResult?.status).toBe("passed")
  expect(reportResult?.warnings).toEqual([])
  expect(report.scenarios.filter((result) => result.status !== "passed").map((result) => result.id)).toEqual([])

  const statementReads = sent.flatMap((request, index) => request.path.endsWith("/reports/statement") ? [index] : [])
  expect(statementReads.length).toBeGreaterThanOrEqual(3)
  const between = sent.slice(statementReads[0], statementReads.at(-1))
  expect(between.filter((request) => request.method !== "GET")).toEqual([])
}, 120_000)
