/**
 * Integrators run the kit in CI against one shared sandbox many times an hour. Five whole runs in a row against one
 * freshly started deployment, all from the same address, must each pass: the kit's deliberate requests without a
 * key or with a malformed one (AUTH-001, AUTH-003…005) must not spend the deployment's budget of failed
 * authentications and get the later runs 429s.
 */
import { afterAll, beforeAll, expect, it } from "vitest"
import { startTestServer, type TestServer } from "../../test/support/server.ts"
import { runConformance } from "../src/index.ts"

let server: TestServer
let keys: { apiKey: string; secondApiKey: string }

beforeAll(async () => {
  // QUOTE-001 waits for the rate cache to expire when an earlier run warmed it: a short TTL keeps five runs short.
  server = await startTestServer({ env: { RATE_CACHE_TTL_SECONDS: "3" } })
  const [first, second] = [await server.newIntegration(), await server.newIntegration()]
  keys = { apiKey: first.apiKey, secondApiKey: second.apiKey }
})
afterAll(() => server?.close())

it("five whole runs in a row against one deployment pass, every one", async () => {
  const verdicts: Array<string> = []
  for (let run = 1; run <= 5; run++) {
    const report = await runConformance({ baseUrl: server.baseUrl, ...keys })
    const failed = report.scenarios.filter((result) => result.status !== "passed")
    verdicts.push(`run ${run}: ${report.verdict}${failed.map((result) => ` ${result.id}`).join("")}`)
  }
  expect(verdicts).toEqual([1, 2, 3, 4, 5].map((run) => `run ${run}: conformant`))
}, 600_000)
