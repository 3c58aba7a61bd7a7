/**
 * The request, refusal and database metrics as the admin listener exports them, moved by real requests to a server
 * in this process (Effect's metric registry is the process's): labelled by route template, never by the path's ids,
 * and by integration only with METRICS_PER_INTEGRATION.
 */
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { Effect, Exit, Scope } from "effect"
import { afterAll, beforeAll, describe, expect } from "vitest"
import { type AdminListener, METRICS_CONTENT_TYPE, serveAdmin } from "../../src/http/AdminServer.ts"
import { manageLifecycle } from "../../src/http/ServeLifecycle.ts"
import { httpTest } from "../support/fixture.ts"
import { BREB, PAYOUTS } from "../support/flows.ts"
import { parseSamples, scrape, valueOf } from "../support/metrics.ts"

const scope = Effect.runSync(Scope.make())
let admin: AdminListener
beforeAll(async () => {
  admin = await Effect.runPromise(Scope.provide(serveAdmin({ host: "127.0.0.1", port: 0 }), scope))
})
afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)))

const metrics = () => scrape(admin.metricsUrl)

const requests = (labels: Record<string, string>) => (text: string) => valueOf(text, "cop_http_requests_total", labels)

const it = httpTest()
const perIntegration = httpTest({ env: { METRICS_PER_INTEGRATION: "true" } })
const limited = httpTest({ env: { RATE_LIMIT_BURST: "1", RATE_LIMIT_PER_SECOND: "0.001" } })

describe("the admin listener", () => {
  it("answers GET /metrics in Prometheus's text format and 404 to anything else", async () => {
    const answer = await fetch(admin.metricsUrl)
    expect(answer.status).toBe(200)
    expect(answer.headers.get("content-type")).toBe(METRICS_CONTENT_TYPE)
    expect(await answer.text()).toContain("# TYPE cop_http_requests_shed_total counter")
    const elsewhere = await fetch(new URL("/", admin.metricsUrl))
    expect(elsewhere.status).toBe(404)
    const posted = await fetch(admin.metricsUrl, { method: "POST" })
    expect(posted.status).toBe(404)
  })
})

describe("request metrics", () => {
  it("count a request under its route's template, method and status class, and its duration", async ({ partner }) => {
    const labels = { route: `${PAYOUTS}/:payoutId`, method: "GET", status_class: "4xx" }
    const before = await metrics()
    const missing = "po_01metricsnotthere0000000"
    expect((await partner.getPayout(missing)).status).toBe(404)
    expect((await partner.getPayout(missing)).status).toBe(404)
    const after = await metrics()
    expect(requests(labels)(after) - requests(labels)(before)).toBe(2)
    expect(
      valueOf(after, "cop_http_request_duration_seconds_count", labels) -
        valueOf(before, "cop_http_request_duration_seconds_count", labels)
    ).toBe(2)
    expect(valueOf(after, "cop_http_request_duration_seconds_bucket", { ...labels, le: "+Inf" })).toBe(
      valueOf(after, "cop_http_request_duration_seconds_count", labels)
    )
    // No label names an id, a key or this integration (METRICS_PER_INTEGRATION is off on this server).
    expect(after).not.toContain(missing)
    expect(after).not.toContain(partner.integrationId)
    expect(after).not.toContain(partner.apiKey.slice(0, 16))
  })

  it("count a created payout under POST 2xx, and its statements in the statement histogram", async ({ partner, user }) => {
    const labels = { route: PAYOUTS, method: "POST", status_class: "2xx" }
    const statements = (text: string) =>
      valueOf(text, "cop_db_statement_duration_seconds_count", { kind: "query" }) +
      valueOf(text, "cop_db_statement_duration_seconds_count", { kind: "transaction" })
    const before = await metrics()
    const payout = await partner.payout(user)
    const after = await metrics()
    expect(requests(labels)(after) - requests(labels)(before)).toBe(1)
    expect(statements(after)).toBeGreaterThan(statements(before))
    expect(after).not.toContain(payout.payoutId)
  })

  it("count a path no route matches under one label, `unmatched`", async ({ server }) => {
    const labels = { route: "unmatched", method: "GET", status_class: "4xx" }
    const before = await metrics()
    expect((await fetch(`${server.baseUrl}/api/integrations/no-such-thing/12345`)).status).toBe(404)
    const after = await metrics()
    expect(requests(labels)(after) - requests(labels)(before)).toBe(1)
    expect(after).not.toContain("no-such-thing")
  })
})

describe("database pool and process metrics", () => {
  it("read the pool's state, the event loop and memory at scrape time", async ({ server }) => {
    await fetch(`${server.baseUrl}/healthz`)
    const text = await metrics()
    expect(valueOf(text, "cop_db_pool_connections_max")).toBe(10)
    expect(valueOf(text, "cop_db_pool_connections_idle") + valueOf(text, "cop_db_pool_connections_in_use"))
      .toBeGreaterThan(0)
    expect(parseSamples(text).map((sample) => sample.name)).toEqual(expect.arrayContaining([
      "cop_db_pool_waiting_requests",
      "cop_db_pool_oldest_wait_seconds",
      "cop_db_pool_acquire_timeouts_total",
      "cop_process_event_loop_delay_p50_seconds",
      "cop_process_event_loop_delay_p99_seconds",
      "cop_process_event_loop_delay_max_seconds"
    ]))
    expect(valueOf(text, "cop_process_heap_used_bytes")).toBeGreaterThan(1_000_000)
    expect(valueOf(text, "cop_process_heap_total_bytes")).toBeGreaterThanOrEqual(
      valueOf(text, "cop_process_heap_used_bytes")
    )
    expect(valueOf(text, "cop_process_resident_memory_bytes")).toBeGreaterThan(1_000_000)
  })
})

describe("with METRICS_PER_INTEGRATION=true", () => {
  perIntegration("request metrics carry the integration", async ({ partner }) => {
    const labels = {
      route: `${BREB}/quote`,
      method: "GET",
      status_class: "2xx",
      integration: partner.integrationId
    }
    const before = await metrics()
    expect((await partner.get(`${BREB}/quote`)).status).toBe(200)
    const after = await metrics()
    expect(requests(labels)(after) - requests(labels)(before)).toBe(1)
  })
})

describe("refusals", () => {
  limited("a key over its rate limit is counted as an api_key refusal", async ({ partner }) => {
    const refused = (text: string) => valueOf(text, "cop_rate_limit_refusals_total", { reason: "api_key" })
    const before = await metrics()
    const statuses = [(await partner.get(`${BREB}/quote`)).status, (await partner.get(`${BREB}/quote`)).status]
    expect(statuses).toContain(429)
    const after = await metrics()
    expect(refused(after) - refused(before)).toBe(statuses.filter((status) => status === 429).length)
  })

  describe("admission", () => {
    let server: Server
    let lifecycle: ReturnType<typeof manageLifecycle>
    let url: string
    beforeAll(async () => {
      server = createServer()
      lifecycle = manageLifecycle(server)
      server.on("request", (_request, response) => response.end("ok"))
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/anything`
    })
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

    const shed = (text: string) => ({
      inFlight: valueOf(text, "cop_http_requests_shed_total", { reason: "in_flight_limit" }),
      databaseQueue: valueOf(text, "cop_http_requests_shed_total", { reason: "database_queue" })
    })

    it("a request shed over the in-flight limit, or while the database's queue is long, is counted by reason", async () => {
      const before = shed(await metrics())
      lifecycle.limitAdmission({ inFlight: 0, overloaded: () => false })
      expect((await fetch(url)).status).toBe(503)
      lifecycle.limitAdmission({ inFlight: 1_000, overloaded: () => true })
      expect((await fetch(url)).status).toBe(503)
      expect((await fetch(url)).status).toBe(503)
      const after = shed(await metrics())
      expect({ inFlight: after.inFlight - before.inFlight, databaseQueue: after.databaseQueue - before.databaseQueue })
        .toEqual({ inFlight: 1, databaseQueue: 2 })
    })
  })
})
