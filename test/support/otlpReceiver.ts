/**
 * An OTLP/HTTP trace receiver for tests: a plain node:http server on 127.0.0.1 that takes `POST /v1/traces` and
 * decodes each export with the OpenTelemetry project's own definitions (the official `.proto` files of
 * open-telemetry/opentelemetry-proto v1.11.0, vendored under ./otlp, read by protobufjs). It accepts protobuf only
 * (`application/x-protobuf`, what the service sends; anything else is answered 415 and counted as refused).
 * `@opentelemetry/otlp-transformer` was the first choice, but its 0.301 only serializes requests (and reads
 * responses): it has no decoder for an export request.
 */
import { createServer, type IncomingMessage } from "node:http"
import type { AddressInfo } from "node:net"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import protobuf from "protobufjs"

const PROTO_ROOT = join(dirname(fileURLToPath(import.meta.url)), "otlp")

const loadRequestType = () => {
  const root = new protobuf.Root()
  root.resolvePath = (_origin, target) => join(PROTO_ROOT, target)
  root.loadSync("opentelemetry/proto/collector/trace/v1/trace_service.proto", { keepCase: false })
  return root.lookupType("opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest")
}

/** OTLP's SpanKind numbers. */
export const SpanKind = { internal: 1, server: 2, client: 3, producer: 4, consumer: 5 } as const

export interface ReceivedSpan {
  /** Lower-case hex, as in a `traceparent`. */
  readonly traceId: string
  readonly spanId: string
  /** Empty for a root span. */
  readonly parentSpanId: string
  readonly name: string
  readonly kind: number
  readonly attributes: Readonly<Record<string, string | number | boolean>>
  /** OTLP's status code: 0 unset, 1 ok, 2 error. */
  readonly statusCode: number
  readonly links: ReadonlyArray<{ readonly traceId: string; readonly spanId: string }>
  /** The resource's `service.name`. */
  readonly serviceName: string
}

export interface OtlpReceiver {
  /** The base URL, for OTEL_EXPORTER_OTLP_ENDPOINT. */
  readonly url: string
  readonly spans: ReadonlyArray<ReceivedSpan>
  /** Exports received (decoded), and those refused (not protobuf, or undecodable). */
  readonly exports: () => number
  readonly refused: () => number
  /** The request headers of the last export (the collector's API key of OTEL_EXPORTER_OTLP_HEADERS, say). */
  readonly lastHeaders: () => Readonly<Record<string, string | Array<string> | undefined>>
  /** Resolves with the spans once `done(spans)` holds; rejects after `timeoutMs`. */
  readonly until: (
    done: (spans: ReadonlyArray<ReceivedSpan>) => boolean,
    timeoutMs?: number
  ) => Promise<ReadonlyArray<ReceivedSpan>>
  readonly close: () => Promise<void>
}

interface AnyValue {
  readonly stringValue?: string
  readonly boolValue?: boolean
  readonly intValue?: string
  readonly doubleValue?: number
}
interface KeyValue {
  readonly key: string
  readonly value?: AnyValue
}
interface DecodedSpan {
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId?: string
  readonly name: string
  readonly kind?: number
  readonly attributes?: ReadonlyArray<KeyValue>
  readonly status?: { readonly code?: number }
  readonly links?: ReadonlyArray<{ readonly traceId: string; readonly spanId: string }>
}
interface DecodedRequest {
  readonly resourceSpans?: ReadonlyArray<{
    readonly resource?: { readonly attributes?: ReadonlyArray<KeyValue> }
    readonly scopeSpans?: ReadonlyArray<{ readonly spans?: ReadonlyArray<DecodedSpan> }>
  }>
}

const valueOf = (value: AnyValue | undefined): string | number | boolean =>
  value?.stringValue ?? value?.boolValue ?? (value?.intValue === undefined ? undefined : Number(value.intValue)) ??
    value?.doubleValue ?? ""

const attributesOf = (list: ReadonlyArray<KeyValue> | undefined) =>
  Object.fromEntries((list ?? []).map((kv) => [kv.key, valueOf(kv.value)]))

const base64ToHex = (value: string | undefined) => Buffer.from(value ?? "", "base64").toString("hex")

const readBody = async (request: IncomingMessage): Promise<Buffer> => {
  const chunks: Array<Buffer> = []
  for await (const chunk of request) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
}

export const startOtlpReceiver = async (): Promise<OtlpReceiver> => {
  const RequestType = loadRequestType()
  const spans: Array<ReceivedSpan> = []
  const waiters = new Set<() => void>()
  let exports = 0
  let refused = 0
  let lastHeaders: IncomingMessage["headers"] = {}

  const decode = (body: Buffer): ReadonlyArray<ReceivedSpan> => {
    const message = RequestType.decode(body)
    // bytes as base64 (ids), 64-bit integers as strings: read back above.
    const request = RequestType.toObject(message, { longs: String, bytes: String, defaults: false }) as DecodedRequest
    return (request.resourceSpans ?? []).flatMap((resourceSpans) => {
      const serviceName = String(attributesOf(resourceSpans.resource?.attributes)["service.name"] ?? "")
      return (resourceSpans.scopeSpans ?? []).flatMap((scope) =>
        (scope.spans ?? []).map((span): ReceivedSpan => ({
          traceId: base64ToHex(span.traceId),
          spanId: base64ToHex(span.spanId),
          parentSpanId: base64ToHex(span.parentSpanId),
          name: span.name,
          kind: span.kind ?? 0,
          attributes: attributesOf(span.attributes),
          statusCode: span.status?.code ?? 0,
          links: (span.links ?? []).map((link) => ({
            traceId: base64ToHex(link.traceId),
            spanId: base64ToHex(link.spanId)
          })),
          serviceName
        }))
      )
    })
  }

  const server = createServer((request, response) => {
    void readBody(request).then((body) => {
      if (request.method !== "POST" || request.url !== "/v1/traces") {
        response.writeHead(404).end()
        return
      }
      if (request.headers["content-type"] !== "application/x-protobuf") {
        refused++
        response.writeHead(415).end()
        return
      }
      let received: ReadonlyArray<ReceivedSpan>
      try {
        received = decode(body)
      } catch {
        refused++
        response.writeHead(400).end()
        return
      }
      exports++
      lastHeaders = request.headers
      spans.push(...received)
      for (const wake of waiters) wake()
      // An empty ExportTraceServiceResponse: all accepted.
      response.writeHead(200, { "content-type": "application/x-protobuf" }).end()
    })
  })
  server.listen(0, "127.0.0.1")
  await new Promise<void>((resolve) => server.once("listening", resolve))
  const { port } = server.address() as AddressInfo

  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    exports: () => exports,
    refused: () => refused,
    lastHeaders: () => lastHeaders,
    until: (done, timeoutMs = 30_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          if (!done(spans)) return
          cleanup()
          resolve(spans)
        }
        const timer = setTimeout(() => {
          cleanup()
          reject(new Error(`the spans expected did not arrive within ${timeoutMs} ms (${spans.length} received)`))
        }, timeoutMs)
        const cleanup = () => {
          clearTimeout(timer)
          waiters.delete(check)
        }
        waiters.add(check)
        check()
      }),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
