/**
 * The kit's scenarios can fail: against deployments that each break one rule (a proxy in front of the
 * real service rewrites one behaviour), the scenario for that rule fails with a message that says what
 * was expected and what came back, and a curl that reproduces it without the key.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestServer, type TestServer } from "../../test/support/server.ts"
import { runConformance, type ScenarioResult } from "../src/index.ts"
import { type BrokenVariant, brokenVariants } from "./support/brokenVariants.ts"
import { type Interceptor, startProxy } from "./support/proxy.ts"

let server: TestServer

beforeAll(async () => {
  server = await startTestServer()
})
afterAll(() => server?.close())

const SEED = 7

const runThrough = async (
  target: TestServer,
  interceptor: Interceptor,
  grep: ReadonlyArray<string>,
  timeoutMs = 20_000
) => {
  const proxy = await startProxy(target.baseUrl, interceptor)
  try {
    const [first, second] = [await target.newIntegration(), await target.newIntegration()]
    const report = await runConformance({
      baseUrl: proxy.baseUrl,
      apiKey: first.apiKey,
      secondApiKey: second.apiKey,
      grep,
      seed: SEED,
      timeoutMs
    })
    return { report, keys: [first.apiKey, second.apiKey] }
  } finally {
    await proxy.close()
  }
}

const statuses = (results: ReadonlyArray<ScenarioResult>) =>
  Object.fromEntries(results.map((result) => [result.id, result.status]))

describe("control: the same scenarios through a proxy that changes nothing", () => {
  it("all pass, so every failure below comes from the break", async () => {
    const grep = [
      ...new Set(brokenVariants.filter((variant) => variant.ownServer === undefined).flatMap((variant) => variant.grep))
    ]
    const { report } = await runThrough(server, {}, grep)
    expect(statuses(report.scenarios)).toEqual(
      Object.fromEntries(report.scenarios.map((result) => [result.id, "passed"]))
    )
    expect(report.scenarios.length).toBe(grep.length)
  }, 120_000)
})

const expectCaught = (variant: BrokenVariant, results: ReadonlyArray<ScenarioResult>, keys: ReadonlyArray<string>) => {
  const byId = new Map(results.map((result) => [result.id, result]))
  for (const id of variant.caughtBy) expect(byId.get(id)?.status, `${id} must fail`).toBe("failed")
  for (const id of variant.keeps ?? []) expect(byId.get(id)?.status, `${id} must still pass`).toBe("passed")
  const failure = byId.get(variant.caughtBy[0] ?? "")?.failure
  expect(failure).toBeDefined()
  expect(`${failure?.message}\n${failure?.expected}\n${failure?.actual}`).toMatch(variant.says)
  expect(failure?.expected).not.toBe("")
  expect(failure?.actual).not.toBe("")
  expect(failure?.curl).toMatch(/^curl -sS -i -X (GET|POST|PATCH) 'http:\/\/127\.0\.0\.1:\d+\//)
  for (const key of keys) expect(failure?.curl).not.toContain(key)
  for (const id of variant.caughtBy.filter((id) => id.startsWith("NEG-"))) {
    const details = byId.get(id)?.failure?.details
    expect(details?.["seed"]).toBe(SEED)
    expect(typeof details?.["shrunkInput"]).toBe("string")
  }
}

describe.concurrent("broken deployments: each is caught by the scenario for the rule it breaks", () => {
  it("there are at least ten", () => {
    expect(brokenVariants.length).toBeGreaterThanOrEqual(10)
  })

  for (const variant of brokenVariants) {
    it(`${variant.name}: ${variant.caughtBy.join(", ")} fail`, async () => {
      const target = variant.ownServer === undefined ? server : await startTestServer({ env: variant.ownServer })
      try {
        const { keys, report } = await runThrough(target, variant.interceptor(), variant.grep, variant.timeoutMs)
        expectCaught(variant, report.scenarios, keys)
        expect(report.fullConformanceClaim).toBe(false)
        expect(report.claim).toMatch(/^NOT CONFORMANT/)
      } finally {
        if (target !== server) await target.close()
      }
    }, 90_000)
  }
})
