import { ConfigProvider, Effect, Option, Redacted } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { webHandler } from "../../src/App.ts"
import { AppConfigShape } from "../../src/config/Config.ts"
import { acquireTestDatabase, type TestDatabase } from "../support/database.ts"

describe("the web-standard handler ((Request) => Promise<Response>)", () => {
  let database: TestDatabase
  let app: ReturnType<typeof webHandler>

  beforeAll(async () => {
    database = await acquireTestDatabase()
    const config = await Effect.runPromise(
      Effect.provideService(AppConfigShape, ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env: {} }))
    )
    app = webHandler({ ...config, databaseUrl: Option.some(Redacted.make(database.url)) })
  })
  afterAll(async () => {
    await app?.dispose()
    await database?.release()
  })

  it("answers health and errors in-process, without a socket, with the same bodies as the server", async () => {
    const health = await app.handler(new Request("http://in-process/healthz"))
    expect(health.status).toBe(200)
    expect(await health.json()).toEqual({ status: "ok", mode: "mock", version: "0.1.0" })

    const missing = await app.handler(new Request("http://in-process/nope"))
    expect(missing.status).toBe(404)
    expect(Object.keys(await missing.json())).toEqual(["error"])

    const unauthorized = await app.handler(new Request("http://in-process/api/integrations/breb/payouts"))
    expect(unauthorized.status).toBe(401)
    expect(unauthorized.headers.get("x-request-id")).toMatch(/^req_/)
  })
})
