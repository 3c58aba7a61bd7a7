/**
 * A deployment that rate-limits the kit: a 429 is waited out as its Retry-After says, within the scenario's time,
 * and one that cannot be waited out is reported as its own cause ("rate limited by the deployment (429)"), not as
 * a failure of the rule the scenario was checking. The deployment is the real service behind a proxy that answers
 * 429 where told.
 */
import { describe, expect, it } from "vitest"
import { RATE_LIMITED } from "../src/http.ts"
import { runConformance } from "../src/index.ts"
import { urlParts, type UpstreamResponse } from "./support/proxy.ts"
import { serviceBehindProxies } from "./support/service.ts"

const service = serviceBehindProxies()

const tooMany = (retryAfter: string | undefined): UpstreamResponse => ({
  status: 429,
  headers: { "content-type": "application/json", ...(retryAfter === undefined ? {} : { "retry-after": retryAfter }) },
  body: Buffer.from(JSON.stringify({ error: "rate limit exceeded for this API key" }))
})

/**
 * The real service, except that the first `times` quotes asked without a Bearer key (AUTH-002's deliberate failures)
 * are answered 429 with `retryAfter`, as a deployment limiting failed authentications would.
 */
const limiting = async (times: number, retryAfter: string | undefined) => {
  const arrivals: Array<number> = []
  const proxy = await service.through({
    response: (request, response) => {
      const unauthenticated = !/^Bearer /.test(request.headers["authorization"] ?? "")
      if (urlParts(request.url).path !== "/api/integrations/breb/quote" || !unauthenticated) return response
      arrivals.push(Date.now())
      return arrivals.length <= times ? tooMany(retryAfter) : response
    }
  })
  return { proxy, arrivals }
}

const run = (baseUrl: string) =>
  runConformance({ baseUrl, apiKey: service.apiKey, grep: ["AUTH-002"], timeoutMs: 10_000 })

describe("a deployment that answers 429", () => {
  it("with Retry-After: 1, twice: the kit waits it out and the scenario passes", async () => {
    const { arrivals, proxy } = await limiting(2, "1")
    const report = await run(proxy.baseUrl)
    expect(report.scenarios.map((result) => [result.id, result.status])).toEqual([["AUTH-002", "passed"]])
    const gaps = arrivals.slice(1).map((at, i) => at - arrivals[i]!)
    expect(gaps.filter((gap) => gap >= 1000).length).toBeGreaterThanOrEqual(2)
  }, 60_000)

  it(
    "with a Retry-After past the scenario's time: failed at once, as rate limited, not as the rule it checks",
    async () => {
      const { proxy } = await limiting(Number.POSITIVE_INFINITY, "3600")
      const started = Date.now()
      const report = await run(proxy.baseUrl)
      expect(Date.now() - started).toBeLessThan(10_000) // not the scenario's timeout
      const [result] = report.scenarios
      expect([result?.id, result?.status, result?.failure?.rootCause]).toEqual(["AUTH-002", "failed", RATE_LIMITED])
      expect(result?.failure?.message).toBe(
        "GET /api/integrations/breb/quote: the deployment rate-limited the kit (429, Retry-After: 3600) after 0 waits: its Retry-After ends after the scenario's time"
      )
    },
    60_000
  )

  it("without a Retry-After: failed as rate limited", async () => {
    const { proxy } = await limiting(Number.POSITIVE_INFINITY, undefined)
    const [result] = (await run(proxy.baseUrl)).scenarios
    expect([result?.status, result?.failure?.rootCause]).toEqual(["failed", RATE_LIMITED])
    expect(result?.failure?.message).toMatch(/\(429, no Retry-After\) after 0 waits: it did not say when to retry$/)
  }, 60_000)
})
