/**
 * The kit says what the versioning policy says (README#versioning): within the kit's compatibility line a later
 * version only adds, so a deployment at a later version, a listed event or a delivery of a type the contract does not
 * know are warnings that cite the policy (failures only with --strict), while another line fails.
 */
import { Webhook } from "standardwebhooks"
import { describe, expect, it } from "vitest"
import { unknownFieldsWarning } from "../src/api.ts"
import { checkResponse, endpoint } from "../src/contract.ts"
import { runConformance } from "../src/index.ts"
import { compatibilityLine, versionFit } from "../src/versioning.ts"
import { type Interceptor, jsonOf, urlParts, withJson } from "./support/proxy.ts"
import { serviceBehindProxies } from "./support/service.ts"

type Json = Record<string, unknown>

describe("versions against the kit's compatibility line", () => {
  it("0.x lines are 0.<minor>, later ones the major; a later version of the line is later, another line other", () => {
    expect(compatibilityLine("0.1.0")).toBe("0.1")
    expect(compatibilityLine("1.4.2")).toBe("1")
    expect(versionFit("0.1.0", "0.1.0")).toBe("same")
    expect(versionFit("0.1.7", "0.1.0")).toBe("later")
    expect(versionFit("0.1.0", "0.1.3")).toBe("earlier")
    expect(versionFit("0.2.0", "0.1.0")).toBe("other-line")
    expect(versionFit("1.0.0", "0.1.0")).toBe("other-line")
    expect(versionFit("1.3.0", "1.0.0")).toBe("later")
    expect(versionFit("v0.1.0", "0.1.0")).toBe("unreadable")
    expect(versionFit(undefined, "0.1.0")).toBe("unreadable")
  })
})

const event = (type: string) => ({
  id: "evt_added_type",
  type,
  createdAt: "2026-11-22T03:19:32.123Z",
  data: { object: { payoutId: "po_1" } }
})

describe("an event type the contract does not know, listed by GET events", () => {
  const spec = endpoint("listEvents")
  const page = { integrationId: "int_1", items: [event("payout.on_hold")], nextCursor: null }

  it("is skipped and reported, not a contract problem", () => {
    const checked = checkResponse(spec, { status: 200, isJson: true, json: page })
    expect(checked.problem).toBeUndefined()
    expect(checked.unknownEventTypes).toEqual(["payout.on_hold"])
  })

  it("is a problem with --strict, and an event that is not an event stays one", () => {
    expect(checkResponse(spec, { status: 200, isJson: true, json: page }, true).problem).toMatch(
      /event types the contract does not know \(--strict\): payout\.on_hold/
    )
    const notAnEvent = { ...page, items: [{ ...event("payout.on_hold"), type: 7 }] }
    expect(checkResponse(spec, { status: 200, isJson: true, json: notAnEvent }).problem).toMatch(/success schema/)
  })
})

it("a new value of a closed set (an enum, an errorCode) is no addition: it breaks the contract", () => {
  const healthz = endpoint("healthz")
  expect(checkResponse(healthz, { status: 200, isJson: true, json: { status: "ok", mode: "mock", version: "0.1.9" } }))
    .toMatchObject({ problem: undefined })
  expect(
    checkResponse(healthz, { status: 200, isJson: true, json: { status: "ok", mode: "staging", version: "0.1.0" } })
      .problem
  )
    .toMatch(/success schema: mode/)
  expect(
    checkResponse(endpoint("createPayout"), { status: 409, isJson: true, json: { error: "x", errorCode: "on_hold" } })
      .problem
  )
    .toMatch(/not an ErrorBody .*errorCode|errorCode "on_hold" is not one the contract declares/)
})

it("the warning for an added field cites the versioning policy", () => {
  expect(unknownFieldsWarning("GET /x", ["riskScore"])).toBe(
    "GET /x answered fields the contract does not know: riskScore (additive under the versioning policy (README#versioning); --strict fails on it)"
  )
})

describe("a deployment that added to the contract, as a later version of the line may", () => {
  const service = serviceBehindProxies()
  const { through } = service
  const reporting = (version: string): Interceptor => ({
    response: (request, response) => {
      const { path } = urlParts(request.url)
      if (path === "/healthz") return withJson(response, { ...(jsonOf(response.body) as Json), version })
      if (path === "/openapi.json") {
        const document = jsonOf(response.body) as Json
        return withJson(response, { ...document, info: { ...(document["info"] as Json), version } })
      }
      return response
    }
  })
  const warningsOf = (report: Awaited<ReturnType<typeof runConformance>>) =>
    report.scenarios.flatMap((result) => result.warnings.map((warning) => `${result.id}: ${warning.message}`))

  it("a later version of the line passes HEALTH-001 and CONTRACT-001, with a warning citing the policy", async () => {
    const proxy = await through(reporting("0.1.7"))
    const report = await runConformance({
      baseUrl: proxy.baseUrl,
      apiKey: service.apiKey,
      grep: ["HEALTH-001", "CONTRACT-001"]
    })
    expect(report.scenarios.map((result) => [result.id, result.status])).toEqual([
      ["HEALTH-001", "passed"],
      ["CONTRACT-001", "passed"]
    ])
    expect(warningsOf(report)).toEqual([
      "HEALTH-001: GET /healthz reports version 0.1.7, later than this kit's 0.1.0: what it added since is not checked (additive under the versioning policy (README#versioning); --strict fails on it)",
      "CONTRACT-001: GET /openapi.json reports version 0.1.7, later than this kit's 0.1.0: what it added since is not checked (additive under the versioning policy (README#versioning); --strict fails on it)"
    ])
  }, 60_000)

  it("with --strict a later version fails them, as every addition does", async () => {
    const proxy = await through(reporting("0.1.7"))
    const grep = ["HEALTH-001", "CONTRACT-001"]
    const report = await runConformance({ baseUrl: proxy.baseUrl, apiKey: service.apiKey, grep, strict: true })
    expect(report.scenarios.map((result) => result.status)).toEqual(["failed", "failed"])
    expect(report.scenarios[0]?.failure?.expected).toBe("version 0.1.0 (--strict)")
  }, 60_000)

  it("another line is refused before any scenario, in one line (the preflight): it is another contract", async () => {
    const proxy = await through(reporting("0.2.0"))
    const run = runConformance({ baseUrl: proxy.baseUrl, apiKey: service.apiKey, grep: ["HEALTH-001", "CONTRACT-001"] })
    await expect(run).rejects.toThrow(
      `${proxy.baseUrl} serves Integrations API 0.2.0 (GET /healthz); this kit checks 0.1.0, and another compatibility line (README#versioning) is not the same contract: use the kit of that line`
    )
  }, 60_000)

  it("an event of a new type in GET events is skipped with a warning: EVT-010 passes", async () => {
    const proxy = await through({
      response: (request, response) => {
        if (request.method !== "GET" || urlParts(request.url).path !== "/api/integrations/events") return response
        const page = jsonOf(response.body) as { items: Array<Json> }
        return withJson(response, { ...page, items: [...page.items, event("payout.on_hold")] })
      }
    })
    const report = await runConformance({ baseUrl: proxy.baseUrl, apiKey: service.apiKey, grep: ["EVT-010"], seed: 5 })
    expect(report.scenarios[0]?.status, JSON.stringify(report.scenarios[0]?.failure)).toBe("passed")
    expect(warningsOf(report)).toContainEqual(
      "EVT-010: GET /api/integrations/events carried event types the contract does not know, skipped: payout.on_hold (additive under the versioning policy (README#versioning); --strict fails on it)"
    )
  }, 60_000)

  it("a delivery of a new type among a payout's events is skipped with a warning: EVT-005 passes", async () => {
    // The proxy learns each endpoint's URL and secret, and when a payout is first moved sends that endpoint a signed
    // delivery of a type the contract does not know, about the payout, before the answer reaches the kit.
    const endpoints: Array<{ readonly url: string; readonly secret: string }> = []
    const proxy = await through({
      response: async (request, response) => {
        const { path } = urlParts(request.url)
        if (request.method === "POST" && path === "/api/integrations/webhook-endpoints" && response.status === 201) {
          const created = jsonOf(response.body) as { url: string; secret: string }
          endpoints.push({ url: created.url, secret: created.secret })
        }
        if (/\/test-helpers\/payouts\/[^/]+\/advance$/.test(path) && response.status === 200) {
          const payout = jsonOf(response.body) as Json
          const body = JSON.stringify({ ...event("payout.on_hold"), data: { object: payout } })
          for (const target of endpoints) {
            const at = new Date()
            const signature = new Webhook(target.secret).sign("evt_added_type", at, body)
            await fetch(target.url, {
              method: "POST",
              headers: {
                "content-type": "application/json",
                "webhook-id": "evt_added_type",
                "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
                "webhook-signature": signature
              },
              body
            })
          }
        }
        return response
      }
    })
    const report = await runConformance({ baseUrl: proxy.baseUrl, apiKey: service.apiKey, grep: ["EVT-005"], seed: 5 })
    expect(report.scenarios[0]?.status, JSON.stringify(report.scenarios[0]?.failure)).toBe("passed")
    expect(warningsOf(report)).toContainEqual(
      "EVT-005: webhook deliveries carried event types the contract does not know, skipped: payout.on_hold (additive under the versioning policy (README#versioning); --strict fails on it)"
    )
  }, 60_000)
})
