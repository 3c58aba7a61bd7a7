import { describe, expect } from "vitest"
import { httpTest } from "../support/fixture.ts"
import { BREB, call, expectErrorBody } from "../support/http.ts"
import type { TestServer } from "../support/server.ts"

const it = httpTest({ env: { RATE_CACHE_TTL_SECONDS: "3600" } })

const quote = (server: TestServer, apiKey: string, query: string, headers: Record<string, string> = {}) =>
  call(server, `${BREB}/quote${query}`, { apiKey, headers })

describe("X-Mock-Scenario: provider_unavailable on quote", () => {
  it("is 503 ErrorBody while the rate cache is warm, and the cache serves again without it", async ({ server, partner }) => {
    const warm = await quote(server, partner.apiKey, "")
    expect(warm.status, warm.text).toBe(200)
    const cached = await quote(server, partner.apiKey, "")
    expect(cached.body.cached).toBe(true)

    for (const query of ["", "?destinationCop=250000"]) {
      expectErrorBody(await quote(server, partner.apiKey, query, { "x-mock-scenario": "provider_unavailable" }), 503)
    }

    const after = await quote(server, partner.apiKey, "")
    expect(after.status, after.text).toBe(200)
    expect(after.body.cached).toBe(true)
    expect(after.body.sellRateUsdCop).toBe(warm.body.sellRateUsdCop)
  })
})

describe("an empty X-Mock-Scenario header", () => {
  it("means no scenario (API reference pages send the header empty), while an unknown one is still 400", async ({ server, partner }) => {
    for (const empty of ["", " "]) {
      const answer = await quote(server, partner.apiKey, "?destinationCop=250000", { "x-mock-scenario": empty })
      expect(answer.status, answer.text).toBe(200)
    }
    expectErrorBody(await quote(server, partner.apiKey, "", { "x-mock-scenario": "sunny_day" }), 400)
  })
})

describe("the health probes", () => {
  it("answer 200 whatever X-Mock-Scenario says (they take no input, so the document lists no 400 for them)", async ({ server }) => {
    for (const path of ["/healthz", "/readyz"]) {
      const answer = await call(server, path, { headers: { "x-mock-scenario": "sunny_day" } })
      expect(answer.status, `${path} ${answer.text}`).toBe(200)
    }
  })
})
