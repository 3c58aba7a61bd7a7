/**
 * Traces (src/base/Tracing.ts) end to end: the service exports to an OTLP/HTTP receiver (test/support/otlpReceiver.ts,
 * decoding with OpenTelemetry's own definitions); a partner's `traceparent` on a create continues its trace through the
 * request, its statements, the provider's calls and, later in the worker, the delivery of `payout.created`, whose
 * request carries that trace on to the partner. Without an endpoint nothing is propagated; at ratio 0 nothing is
 * recorded unless a partner's sampled trace asks.
 */
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { randomBytes } from "node:crypto"
import { Context, Effect, Layer, Option, Tracer } from "effect"
import { FetchHttpClient, HttpClient } from "effect/http"
import { afterAll, beforeAll, describe, expect, it as plain } from "vitest"
import { sampleByRatio, sampledAtRatio, TracingOff } from "../../src/base/Tracing.ts"
import { httpTest } from "../support/fixture.ts"
import { type Partner, payoutBody } from "../support/flows.ts"
import { type OtlpReceiver, type ReceivedSpan, SpanKind, startOtlpReceiver } from "../support/otlpReceiver.ts"
import { receiverForTests } from "../support/webhookReceiver.ts"

const webhooks = receiverForTests()

let otlp: OtlpReceiver
beforeAll(async () => {
  otlp = await startOtlpReceiver()
})
afterAll(() => otlp.close())

const newTraceparent = (flags: "01" | "00") => {
  const traceId = randomBytes(16).toString("hex")
  const spanId = randomBytes(8).toString("hex")
  return { traceId, spanId, header: `00-${traceId}-${spanId}-${flags}` }
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-(0[01])$/

const inTrace = (traceId: string) => (spans: ReadonlyArray<ReceivedSpan>) => spans.filter((s) => s.traceId === traceId)

/** The spans from `span` up to its trace's root. */
const ancestry = (spans: ReadonlyArray<ReceivedSpan>, span: ReceivedSpan): ReadonlyArray<ReceivedSpan> => {
  const chain = [span]
  let parent = spans.find((s) => s.spanId === span.parentSpanId)
  while (parent !== undefined) {
    chain.push(parent)
    const next = parent.parentSpanId
    parent = spans.find((s) => s.spanId === next)
  }
  return chain
}

const subscribe = async (partner: Partner) => {
  const endpoint = await partner.post("/api/integrations/webhook-endpoints", {
    url: webhooks.url,
    events: ["payout.created"]
  })
  expect(endpoint.status, endpoint.text).toBe(201)
}

const createdDelivery = (payoutId: string) =>
  webhooks.next((d) => d.event.type === "payout.created" && d.event.data.object["payoutId"] === payoutId, 30_000)

// One server per setting (file-scoped fixtures are declared at the top level).
const traced = httpTest(() => ({
  env: { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_BSP_SCHEDULE_DELAY: "50", OTEL_SERVICE_NAME: "payouts-test" }
}))
const ratioZero = httpTest(() => ({
  env: { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_BSP_SCHEDULE_DELAY: "50", OTEL_TRACES_SAMPLER_ARG: "0" }
}))
const off = httpTest()

describe("traces exported over OTLP", () => {
  traced(
    "follow one payout from a partner's traceparent to the delivered payout.created",
    async ({ partner, server, user }) => {
      await subscribe(partner)
      // A health check is never traced (probed every few seconds), even with a sampled traceparent.
      const probe = newTraceparent("01")
      const health = await fetch(`${server.baseUrl}/healthz`, { headers: { traceparent: probe.header } })
      expect(health.status).toBe(200)
      const incoming = newTraceparent("01")
      const body = payoutBody(user)
      const created = await partner.createPayout(body, { traceparent: incoming.header })
      expect(created.status, created.text).toBe(201)
      const payoutId = (created.json as { payoutId: string }).payoutId

      // The delivery carried the trace on to the partner: same trace id, the delivery span's id, sampled.
      const delivery = await createdDelivery(payoutId)
      const sent = TRACEPARENT.exec(delivery.headers["traceparent"] ?? "")
      expect(sent, `traceparent on the webhook: ${delivery.headers["traceparent"]}`).not.toBeNull()
      expect(sent?.[1]).toBe(incoming.traceId)
      expect(sent?.[3]).toBe("01")

      const spans = inTrace(incoming.traceId)(
        await otlp.until((all) => all.some((s) => s.traceId === incoming.traceId && s.spanId === sent?.[2]))
      )
      // The request: a server span under the partner's span, named by the route's template.
      const request = spans.find((s) => s.kind === SpanKind.server)
      expect(request, spans.map((s) => s.name).join(", ")).toBeDefined()
      expect(request?.parentSpanId).toBe(incoming.spanId)
      expect(request?.name).toBe("POST /api/integrations/breb/payouts")
      expect(request?.attributes["http.route"]).toBe("/api/integrations/breb/payouts")
      expect(request?.attributes["http.response.status_code"]).toBe(201)
      expect(request?.serviceName).toBe("payouts-test")

      // Its statements and the provider's calls, below it.
      const below = (span: ReceivedSpan) => ancestry(spans, span).includes(request!)
      const statements = spans.filter((s) =>
        s.attributes["db.system.name"] === "postgresql" && s.kind === SpanKind.client
      )
      expect(statements.filter(below).length).toBeGreaterThan(3)
      expect(statements.every((s) => typeof s.attributes["db.query.text"] === "string")).toBe(true)
      const providerCalls = spans.filter((s) => s.name.startsWith("PayoutProvider."))
      expect(providerCalls.map((s) => s.name)).toContain("PayoutProvider.createTransfer")
      expect(providerCalls.every(below)).toBe(true)

      // The delivery: later, in the worker, still in the trace, continuing the create's write.
      const deliverySpan = spans.find((s) => s.spanId === sent?.[2])
      expect(deliverySpan?.name).toBe("webhook payout.created")
      expect(deliverySpan?.kind).toBe(SpanKind.consumer)
      expect(deliverySpan?.attributes["webhook.outcome"]).toBe("delivered")
      expect(ancestry(spans, deliverySpan!)).toContain(request)

      // No statement's parameters: the user's address and Bre-B key appear in no attribute.
      const values = otlp.spans.flatMap((s) => Object.values(s.attributes).map(String))
      expect(values.filter((v) => v.toLowerCase().includes(user.toLowerCase()) || v.includes(body.breBKey))).toEqual([])
      expect(otlp.refused()).toBe(0)
      expect(otlp.spans.filter((s) => s.traceId === probe.traceId).map((s) => s.name)).toEqual([])
    }
  )
})

describe("traces sampled at ratio 0", () => {
  ratioZero("record nothing of their own, and follow a partner's sampled trace", async ({ partner, user }) => {
    await subscribe(partner)
    const before = otlp.spans.length
    // Not sampled: the trace still goes on to the partner, flagged 00.
    const unsampled = await partner.payout(user)
    const quiet = TRACEPARENT.exec((await createdDelivery(unsampled.payoutId)).headers["traceparent"] ?? "")
    expect(quiet?.[3]).toBe("00")

    const incoming = newTraceparent("01")
    const created = await partner.createPayout(payoutBody(user), { traceparent: incoming.header })
    expect(created.status, created.text).toBe(201)
    const payoutId = (created.json as { payoutId: string }).payoutId
    const sent = TRACEPARENT.exec((await createdDelivery(payoutId)).headers["traceparent"] ?? "")
    expect(sent?.[1]).toBe(incoming.traceId)
    expect(sent?.[3]).toBe("01")
    await otlp.until((all) => all.some((s) => s.spanId === sent?.[2]))
    // Every span exported since belongs to the partner's trace (the unsampled create's ended first: exported first).
    // This server's (the other one exporting here is named payouts-test).
    const exported = otlp.spans.slice(before).filter((s) => s.serviceName === "cop-integrations")
    expect(exported.filter((s) => s.traceId !== incoming.traceId).map((s) => s.name)).toEqual([])
    expect(exported.some((s) => s.kind === SpanKind.server && s.parentSpanId === incoming.spanId)).toBe(true)
  })
})

describe("tracing off (no OTEL_EXPORTER_OTLP_ENDPOINT)", () => {
  off("sends no traceparent on a webhook, even after a partner sent one", async ({ partner, user }) => {
    await subscribe(partner)
    const created = await partner.createPayout(payoutBody(user), { traceparent: newTraceparent("01").header })
    expect(created.status, created.text).toBe(201)
    const delivery = await createdDelivery((created.json as { payoutId: string }).payoutId)
    expect(delivery.headers["traceparent"]).toBeUndefined()
    expect(delivery.headers["b3"]).toBeUndefined()
  })

  plain("sends no traceparent or b3 on an HttpClient request (a no-op span's ids were sent)", async () => {
    const seen: Array<Record<string, unknown>> = []
    const server = createServer((request, response) => {
      seen.push({ ...request.headers })
      response.end("ok")
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    try {
      const { port } = server.address() as AddressInfo
      await Effect.runPromise(
        HttpClient.get(`http://127.0.0.1:${port}/`).pipe(
          Effect.provide(Layer.merge(FetchHttpClient.layer, TracingOff))
        )
      )
      expect(seen.length).toBe(1)
      expect(seen[0]?.["traceparent"]).toBeUndefined()
      expect(seen[0]?.["b3"]).toBeUndefined()
    } finally {
      server.close()
    }
  })
})

describe("the sampler", () => {
  const recorded: Array<string> = []
  const delegate = Tracer.make({
    span(options) {
      const span = Tracer.nativeTracer.span(options)
      recorded.push(span.name)
      return span
    }
  })
  const start = (kind: Tracer.SpanKind, parent: Option.Option<Tracer.AnySpan> = Option.none()) => ({
    name: kind,
    parent,
    annotations: Context.empty(),
    links: [],
    startTime: 0n,
    kind,
    root: Option.isNone(parent),
    sampled: Option.match(parent, { onNone: () => true, onSome: (p) => p.sampled })
  })

  plain("decides a new trace by its id, the same id the same way, about the ratio's share", () => {
    const ids = Array.from({ length: 4000 }, () => randomBytes(16).toString("hex"))
    const share = ids.filter((id) => sampledAtRatio(id, 0.1)).length / ids.length
    expect(share).toBeGreaterThan(0.06)
    expect(share).toBeLessThan(0.14)
    expect(ids.every((id) => sampledAtRatio(id, 0.1) === sampledAtRatio(id, 0.1))).toBe(true)
    expect(ids.some((id) => sampledAtRatio(id, 0))).toBe(false)
    expect(ids.every((id) => sampledAtRatio(id, 1))).toBe(true)
  })

  plain("starts traces only at requests and background work; follows a parent's flag", () => {
    recorded.length = 0
    const tracer = sampleByRatio(delegate, 1)
    expect(tracer.span(start("server")).sampled).toBe(true)
    expect(tracer.span(start("consumer")).sampled).toBe(true)
    // A statement or a call outside any request or job (a polling loop's) starts no trace.
    expect(tracer.span(start("client")).sampled).toBe(false)
    expect(tracer.span(start("internal")).sampled).toBe(false)
    const sampledParent = Tracer.externalSpan({ traceId: "a".repeat(32), spanId: "b".repeat(16), sampled: true })
    const unsampledParent = Tracer.externalSpan({ traceId: "c".repeat(32), spanId: "d".repeat(16), sampled: false })
    const none = sampleByRatio(delegate, 0)
    expect(none.span(start("server")).sampled).toBe(false)
    expect(none.span(start("server", Option.some(sampledParent))).sampled).toBe(true)
    const quiet = tracer.span(start("server", Option.some(unsampledParent)))
    expect(quiet.sampled).toBe(false)
    expect(quiet.traceId).toBe("c".repeat(32))
    // Never built by the exporting tracer: no client or internal root reached it.
    expect(recorded.filter((name) => name === "client" || name === "internal")).toEqual([])
  })
})
