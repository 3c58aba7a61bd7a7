/**
 * The service as `npm start` runs it (dist/server.mjs, scripts/build.mjs) serves /docs with Scalar's script: the
 * bundle keeps Scalar's 3.2 MB in a file of its own beside the entry (dist/server.httpApiScalar.mjs), read on the
 * first /docs rather than at every start, and the entry must find it there. (The other process tests run the sources.)
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Service, startService, stopService } from "../../scripts/bench/service.ts"
import { acquireTestDatabase, type TestDatabase } from "../support/database.ts"

let database: TestDatabase
let service: Service

beforeAll(async () => {
  database = await acquireTestDatabase()
  service = await startService({ DATABASE_URL: database.url, LOG_LEVEL: "Warn" }, false)
}, 120_000)

afterAll(async () => {
  if (service !== undefined) await stopService(service.child)
  await database?.release()
})

describe("the bundled service's /docs", () => {
  it("serves the page and Scalar's script from the file beside the bundle", async () => {
    const page = await fetch(`${service.baseUrl}/docs`).then((answer) => answer.text())
    const script = /src="(\/docs\/scalar\.js[^"]*)"/.exec(page)?.[1]
    expect(script, page.slice(0, 500)).toBeDefined()
    const answer = await fetch(`${service.baseUrl}${script}`)
    expect(answer.status).toBe(200)
    expect(await answer.text()).toContain("@scalar/api-reference")
  }, 60_000)
})
