/**
 * The live provider client carries the trace on (issue #32, traces): with tracing on, a call to Bridge sends a W3C
 * `traceparent` of the current trace (its HTTP client span, a child of the port's `PayoutProvider.*` span); with
 * tracing off it sends none.
 */
import { createServer, type IncomingHttpHeaders } from "node:http"
import type { AddressInfo } from "node:net"
import { Duration, Effect, type Layer, Redacted } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { TracingOff, tracingLayer } from "../../src/base/Tracing.ts"
import { PayoutProvider, withProviderSpansLayer } from "../../src/provider/PayoutProvider.ts"
import { BridgeProvider } from "../../src/provider/bridge/BridgeClient.ts"
import { type OtlpReceiver, startOtlpReceiver } from "../support/otlpReceiver.ts"

const seen: Array<IncomingHttpHeaders> = []
const bridge = createServer((request, response) => {
  seen.push(request.headers)
  response.writeHead(200, { "content-type": "application/json" })
  response.end(JSON.stringify({ midmarket_rate: "4000", sell_rate: "3960" }))
})
let otlp: OtlpReceiver
let baseUrl = ""

beforeAll(async () => {
  otlp = await startOtlpReceiver()
  await new Promise<void>((resolve) => bridge.listen(0, "127.0.0.1", resolve))
  baseUrl = `http://127.0.0.1:${(bridge.address() as AddressInfo).port}/v0`
})
afterAll(async () => {
  bridge.close()
  await otlp.close()
})

const provider = () =>
  withProviderSpansLayer(
    BridgeProvider({
      baseUrl,
      apiKey: Redacted.make("sk-test"),
      sourceRail: "base",
      destinationRail: "breb",
      timeout: Duration.seconds(5),
      retries: 0
    })
  )

/** One rates call inside a request's span, with `tracing`; the trace id of that span. */
const ratesCall = (tracing: Layer.Layer<never>) =>
  Effect.runPromise(
    Effect.gen(function*() {
      const span = yield* Effect.currentSpan
      yield* Effect.flatMap(PayoutProvider, (p) => p.usdCopRates)
      return span.traceId
    }).pipe(
      Effect.withSpan("request", { kind: "server" }),
      Effect.provide(provider()),
      Effect.scoped,
      Effect.provide(tracing)
    )
  )

describe("traceparent on provider calls", () => {
  it("is the current trace's, from the client span under the port's span, when tracing is on", async () => {
    const tracing = tracingLayer({
      endpoint: otlp.url,
      headers: {},
      serviceName: "provider-test",
      ratio: 1,
      exportIntervalMs: 50
    })
    const traceId = await ratesCall(tracing)
    const header = seen.at(-1)?.["traceparent"]
    expect(header).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`))
    const clientSpanId = String(header).split("-")[2]
    const spans = await otlp.until((all) => all.some((s) => s.spanId === clientSpanId))
    const client = spans.find((s) => s.spanId === clientSpanId)
    const port = spans.find((s) => s.spanId === client?.parentSpanId)
    expect(port?.name).toBe("PayoutProvider.usdCopRates")
    expect(port?.traceId).toBe(traceId)
    // The Api-Key is not recorded on the client span.
    expect(JSON.stringify(spans)).not.toContain("sk-test")
  })

  it("is not sent when tracing is off", async () => {
    const before = seen.length
    const traceId = await ratesCall(TracingOff)
    expect(traceId).toBe("noop")
    expect(seen.length).toBe(before + 1)
    expect(seen.at(-1)?.["traceparent"]).toBeUndefined()
    expect(seen.at(-1)?.["b3"]).toBeUndefined()
  })
})
