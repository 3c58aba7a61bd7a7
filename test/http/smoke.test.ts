import { describe, expect } from "vitest"
import { httpTest } from "../support/fixture.ts"
import { withClient } from "../support/server.ts"

const it = httpTest()

describe("smoke", () => {
  it("serves healthz and a quote through the typed client", async ({ server }) => {
    const health = await fetch(`${server.baseUrl}/healthz`).then((r) => r.json())
    expect(health).toEqual({ status: "ok", mode: "mock", version: "0.1.0" })
    const { apiKey } = await server.newIntegration()
    const quote = await withClient(
      server.baseUrl,
      apiKey,
      (client) => client.breb.quote({ query: {}, headers: {} })
    )
    expect(quote.cached).toBe(false)
  })
})
