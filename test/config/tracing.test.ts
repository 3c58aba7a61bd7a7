/** The OTEL_* variables as the configuration reads them (the behaviour: test/base/tracing.test.ts). */
import { ConfigProvider, Effect, Option, Redacted } from "effect"
import { describe, expect, it } from "vitest"
import { AppConfigShape } from "../../src/config/Config.ts"

const read = (env: Record<string, string>) =>
  Effect.runPromise(
    Effect.provideService(AppConfigShape, ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env }))
  )

const refusal = (env: Record<string, string>) => read(env).then(() => "read", (error: unknown) => String(error))

describe("tracing settings", () => {
  it("default to no exporter, every trace, the service's name", async () => {
    const { tracing } = await read({})
    expect(Option.isNone(tracing.otlpEndpoint)).toBe(true)
    expect(tracing.tracesSampleRatio).toBe(1)
    expect(tracing.otelServiceName).toBe("cop-integrations")
    expect(Redacted.value(tracing.otlpHeaders)).toEqual({})
    expect(tracing.tracesExportIntervalMs).toBe(5000)
  })

  it("read an endpoint, headers as OpenTelemetry writes them, a ratio and a name", async () => {
    const { tracing } = await read({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector.internal:4318",
      OTEL_EXPORTER_OTLP_HEADERS: "api-key=a%2Cb,X-Tenant = payouts",
      OTEL_TRACES_SAMPLER_ARG: "0.1",
      OTEL_SERVICE_NAME: "payouts-eu"
    })
    expect(tracing.otlpEndpoint).toEqual(Option.some("http://collector.internal:4318"))
    expect(Redacted.value(tracing.otlpHeaders)).toEqual({ "api-key": "a,b", "x-tenant": "payouts" })
    expect(tracing.tracesSampleRatio).toBe(0.1)
    expect(tracing.otelServiceName).toBe("payouts-eu")
  })

  it("refuse, naming the variable, a ratio outside 0..1, an endpoint that is not a URL and headers not name=value", async () => {
    expect(await refusal({ OTEL_TRACES_SAMPLER_ARG: "1.5" })).toContain("OTEL_TRACES_SAMPLER_ARG")
    expect(await refusal({ OTEL_TRACES_SAMPLER_ARG: "ten percent" })).toContain("OTEL_TRACES_SAMPLER_ARG")
    expect(await refusal({ OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" })).toContain("OTEL_EXPORTER_OTLP_ENDPOINT")
    expect(await refusal({ OTEL_EXPORTER_OTLP_HEADERS: "just-a-key" })).toContain("OTEL_EXPORTER_OTLP_HEADERS")
  })
})
