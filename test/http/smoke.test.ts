import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestServer, type TestServer, withClient } from "../support/server.ts"

let server: TestServer
beforeAll(async () => {
  server = await startTestServer()
})
afterAll(() => server?.close())

describe("smoke", () => {
  it("serves healthz and a quote through the typed client", async () => {
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
